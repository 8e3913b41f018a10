// Names each entry point's module after its import path (`rollback/src` → `@netplay/rollback`,
// `state/src/testing` → `@netplay/state/testing`) instead of its directory.
//
// Adds the option `packagesRequiringMemberDocumentation`: the packages (as in
// `packagesRequiringDocumentation`) whose properties and enum members must also carry a comment.
// TypeDoc's own `requiredToBeDocumented` applies to every package at once; this list lets the
// requirement be switched on one package at a time. Like TypeDoc's check it runs only when
// `validation.notDocumented` is on, skips members of inline parameter types, honours
// `intentionallyNotDocumented`, and reports through `logger.validationWarning`, so
// `treatWarningsAsErrors` fails the build on it. (A plain data property named in
// `intentionallyNotDocumented` would be reported unused by TypeDoc's own check: document it.)
import { Application, Converter, ParameterType, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.options.addDeclaration({
    name: 'packagesRequiringMemberDocumentation',
    help: 'Packages whose properties and enum members must be documented too',
    type: ParameterType.Array,
    defaultValue: [],
  });

  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const mod of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const m = /^([a-z0-9-]+)\/src(?:\/(.+?))?(?:\/index)?$/.exec(mod.name);
      if (m) mod.name = `@netplay/${m[1]}${m[2] ? `/${m[2]}` : ''}`;
    }
  });

  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    if (!app.options.getValue('validation').notDocumented) return;
    const packages = app.options.getValue('packagesRequiringMemberDocumentation');
    if (packages.length === 0) return;
    const intentional = app.options.getValue('intentionallyNotDocumented');
    const members = project.getReflectionsByKind(ReflectionKind.Property | ReflectionKind.EnumMember);
    outer: for (const ref of members) {
      if (ref.hasComment()) continue;
      for (let r = ref.parent; r; r = r.parent) {
        if (r.kindOf(ReflectionKind.Parameter)) continue outer;
      }
      const symbolId = project.getSymbolIdFromReflection(ref);
      if (!symbolId || !packages.includes(symbolId.packageName)) continue;
      const name = ref.getFriendlyFullName();
      if (intentional.includes(name)) continue;
      app.logger.validationWarning(
        `${name} (${ReflectionKind[ref.kind]}), defined in ${symbolId.packageName}/${symbolId.packagePath}, does not have any documentation`,
      );
    }
  });
}
