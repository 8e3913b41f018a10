import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../src/exit-codes.js';

describe('exit codes', () => {
  it('the README table lists exactly the codes of ExitCode, with their names', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) \| (\w+) \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
    expect(Object.fromEntries(rows)).toEqual({ ...ExitCode });
  });

  it('are distinct, and a CliError carries its code name', () => {
    const values = Object.values(ExitCode);
    expect(new Set(values).size).toBe(values.length);
    expect(new CliError(ExitCode.PasswordRefused, 'no').code).toBe('PasswordRefused');
  });
});
