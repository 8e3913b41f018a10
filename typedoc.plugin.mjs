// Names each entry point's module after its import path (`rollback/src` → `@netplay/rollback`,
// `state/src/testing` → `@netplay/state/testing`) instead of its directory.
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const mod of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const m = /^([a-z0-9-]+)\/src(?:\/(.+?))?(?:\/index)?$/.exec(mod.name);
      if (m) mod.name = `@netplay/${m[1]}${m[2] ? `/${m[2]}` : ''}`;
    }
  });
}
