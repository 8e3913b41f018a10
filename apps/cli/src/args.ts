import { CliError, ExitCode } from './exit-codes.js';

/** Parses an integer option in [min, max]; a bad value is a usage error. */
export function intOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new CliError(ExitCode.Usage, `--${name} must be an integer in [${min}, ${max}], got "${value}"`);
  return n;
}

/** Parses a number option in [min, max]; a bad value is a usage error. */
export function numberOption(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new CliError(ExitCode.Usage, `--${name} must be a number in [${min}, ${max}], got "${value}"`);
  return n;
}

/** Checks an option against a list of choices. */
export function choiceOption<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(choices as readonly string[]).includes(value))
    throw new CliError(ExitCode.Usage, `--${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}

/** Turns node:util parseArgs errors into usage errors. */
export function usageErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
      throw new CliError(ExitCode.Usage, (e as Error).message);
    throw e;
  }
}
