import type { Assign, DeclClause } from 'mvdan-sh';
import { mergeEffects, type Effects, type Scope, type StdinFeed } from './command-invocation.js';
import type { StatementRunner } from './expansion-walk.js';
import { wordValue } from './shell-words.js';
import { checkAssignedName } from './variable-assignments.js';
import { recordAssignment, recordAttributes, recordNamedValue, stopFollowing } from './state-changes.js';

interface DeclarationWalker extends StatementRunner {
  assignment(assign: Assign, scope: Scope, stdin: StdinFeed): Effects;
}

/**
 * `export`, `declare`, `typeset`, `local`, `readonly`, `nameref`: every name given a value is
 * checked; with `-n` (a name reference) the referenced name is checked too, since assigning
 * through `declare -n r=PATH; r=/x` sets PATH. Flags arrive as naked values without a name.
 */
export function declarationEffects(walker: DeclarationWalker, node: DeclClause, scope: Scope, stdin: StdinFeed): Effects {
  const { engine } = walker;
  const variant = node.Variant.Value;
  let flags = variant === 'nameref' ? 'n' : '';
  const effects: Effects[] = [];
  const names: string[] = [];
  for (const assign of node.Args) {
    effects.push(walker.assignment(assign, scope, stdin));
    const value = assign.Value === null ? null : wordValue(assign.Value, scope);
    if (assign.Name === null) {
      if (value?.kind !== 'literal') {
        engine.report('high', `assigns a variable whose name cannot be resolved: ${assign.Value === null ? '?' : walker.textOf(assign.Value)}`);
        stopFollowing(engine, scope, `${variant} of a variable whose name cannot be known`);
        continue;
      }
      if (/^[-+]/.test(value.text)) {
        flags += value.text.slice(1);
        continue;
      }
      // `export "NAME=value"` reaches here as one naked word.
      const [name = '', assigned] = value.text.split(/=(.*)/s);
      if (!isFunctionDeclaration(flags) && (assigned !== undefined || flags.includes('n'))) checkAssignedName(engine, scope, name);
      if (flags.includes('n') && assigned !== undefined) checkAssignedName(engine, scope, assigned);
      if (!isFunctionDeclaration(flags)) {
        names.push(name);
        if (assigned !== undefined) recordNamedValue(engine, scope, name, assigned);
      }
      continue;
    }
    if (isFunctionDeclaration(flags)) continue;
    if (flags.includes('n') && value?.kind === 'literal') checkAssignedName(engine, scope, value.text);
    names.push(assign.Name.Value);
    // The value stays in the shell for the lines after this one (a `local` only in its function,
    // which is over-counted here: it errs toward knowing less).
    if (assign.Value !== null || assign.Array !== null) recordAssignment(engine, walker, scope, assign);
  }
  // `export -n` takes the export away; for the others -n makes a name reference.
  if (!isFunctionDeclaration(flags)) recordAttributes(engine, scope, variant === 'export' ? flags.replaceAll('n', '') : flags, names);
  engine.report('medium', `declares shell variables: ${variant}`);
  return mergeEffects(...effects);
}

function isFunctionDeclaration(flags: string): boolean {
  return flags.includes('f') || flags.includes('F');
}
