import { archiveRules } from './archive-commands.js';
import type { Argument, CommandRule, Engine, Scope } from './command-invocation.js';
import { dataToolRules } from './data-tools.js';
import { fileChangeRules } from './file-changes.js';
import { findRules } from './find-command.js';
import { gitRules } from './git-commands.js';
import { interactiveProgramRules } from './interactive-programs.js';
import { interpreterRules } from './interpreters.js';
import { networkRules } from './network-tools.js';
import { programRunnerRules } from './program-runners.js';
import { checkRead, checkUnknownArguments } from './path-access.js';
import { readOnlyRules } from './read-only-commands.js';
import { shellBuiltinRules } from './shell-builtins.js';
import { systemRules } from './system-commands.js';
import { textProgramRules } from './text-programs.js';
import { wrapperRules } from './wrappers.js';

/**
 * One rule per command name, whatever family it sits in: a second rule for a name is refused when
 * the rules load, since with last-one-wins one of them would be dead without anyone noticing (a
 * read-only rule for `more` once hid its rule as a program that runs typed commands).
 */
export function ruleRegistry(families: Readonly<Record<string, ReadonlyMap<string, CommandRule>>>): ReadonlyMap<string, CommandRule> {
  const rules = new Map<string, CommandRule>();
  const owners = new Map<string, string>();
  for (const [family, familyRules] of Object.entries(families)) {
    for (const [name, rule] of familyRules) {
      const owner = owners.get(name);
      if (owner !== undefined) throw new Error(`two rules for the command ${name}: in ${owner} and in ${family}`);
      owners.set(name, family);
      rules.set(name, rule);
    }
  }
  return rules;
}

const rules = ruleRegistry({
  readOnlyRules, findRules, textProgramRules, fileChangeRules, archiveRules, dataToolRules, gitRules, wrapperRules,
  interpreterRules, networkRules, systemRules, shellBuiltinRules, interactiveProgramRules, programRunnerRules,
});

/**
 * Anything not listed is medium (CONTRACT §4's default), but its arguments are still looked at:
 * one that looks like a path outside the workspaces is high, and so is one whose value cannot be
 * known, since nobody can tell whether it names a file.
 */
const unlistedCommand: CommandRule = (invocation) => {
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  checkUnknownArguments(invocation, invocation.args);
  return undefined;
};

/** Whether a name is a program this analyser knows (an alias or function of that name shadows it). */
export function isKnownProgram(name: string): boolean {
  return rules.has(name);
}

export function ruleFor(name: string): CommandRule {
  return rules.get(name) ?? (name.startsWith('mkfs.') ? (rules.get('mkfs') ?? unlistedCommand) : unlistedCommand);
}

/** `$X`, `$(…)`, `$'…'`, `{a,b}`, `/bin/r?`, `~user` as a command name: what runs cannot be known. */
export function unknownCommandName(engine: Engine, name: Argument, args: readonly Argument[], scope: Scope): void {
  engine.report('high', `command name cannot be resolved: ${name.text}`);
  checkUnknownArguments({ engine, scope }, args);
}

/** `./build.sh`, `scripts/x`: a program from the workspace, run as it is. */
export function runsScriptByPath(engine: Engine, script: Argument, args: readonly Argument[], scope: Scope): void {
  engine.report('medium', `runs a script: ${script.text}`);
  checkRead({ engine, scope }, script);
  checkUnknownArguments({ engine, scope }, args);
}
