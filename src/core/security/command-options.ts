import type { Argument } from './command-invocation.js';
import { literalValue } from './shell-words.js';

/** How a command's options are spelt, as far as telling option values from operands needs. */
export interface OptionSyntax {
  /** Short option letters that take a value (`-n 5`, `-n5`). */
  readonly valued?: string;
  /** Short option letters whose value, if any, is only what follows in the same word (`sed -i.bak`). */
  readonly attached?: string;
  /** Long options (`--name`) that take the next word as value when written without `=`. */
  readonly valuedLong?: readonly string[];
  /** Options end at the first operand (wrappers: what follows is the wrapped command's). */
  readonly stopAtOperand?: boolean;
}

export interface ParsedOption {
  /** As given: `-r`, `--recursive`, `--rec` (before any `=`). */
  readonly name: string;
  readonly value: Argument | null;
}

export interface ParsedCommand {
  readonly options: readonly ParsedOption[];
  readonly operands: readonly Argument[];
  /**
   * Operands whose value is not known and may expand to an option (`"$A"`, `$OPTS`, `"$@"`):
   * `A=--pre=./x; rg "$A" TODO` runs ./x.
   */
  readonly mayBeOptions: readonly Argument[];
  /** Index in the input of the first argument left unparsed (with stopAtOperand: the first operand). */
  readonly rest: number;
}

/**
 * Whether a long option as given names `full`. GNU getopt and git accept any unambiguous prefix
 * (`--rec` for `--recursive`), so a prefix counts: over-matching only ever raises a level.
 */
export function longMatches(given: string, full: string): boolean {
  return given === full || (given.length >= 3 && full.startsWith(given));
}

/** A literal argument cut out of another one (a value attached to its option). */
export function subArgument(argument: Argument, start: number): Argument {
  const { value } = argument;
  if (value.kind !== 'literal') return argument;
  const text = value.text.slice(start);
  return { text, value: literalValue(text, value.glob >= start ? value.glob - start : -1), remote: argument.remote };
}

function optionText(argument: Argument): string | null {
  const { value } = argument;
  return value.kind === 'literal' && value.text.length > 1 && value.text.startsWith('-') ? value.text : null;
}

/**
 * Splits arguments into options and operands the way getopt does, permuting unless told to stop
 * at the first operand. Words whose value is not known are operands: the rules then treat them
 * as unresolvable paths, which is the safe reading.
 */
export function parseOptions(args: readonly Argument[], syntax: OptionSyntax = {}): ParsedCommand {
  const options: ParsedOption[] = [];
  const operands: Argument[] = [];
  const mayBeOptions: Argument[] = [];
  const valued = syntax.valued ?? '';
  const attached = syntax.attached ?? '';
  let index = 0;
  for (; index < args.length; index += 1) {
    const argument = args[index];
    if (argument === undefined) break;
    const text = optionText(argument);
    if (text === '--') {
      operands.push(...args.slice(index + 1));
      return { options, operands, mayBeOptions, rest: syntax.stopAtOperand === true ? index + 1 : args.length };
    }
    if (text === null) {
      // `--name=$X`: the option is known, its value is not.
      const long = argument.value.kind === 'literal' ? null : /^--([A-Za-z0-9][A-Za-z0-9-]*)=/.exec(argument.text);
      if (long?.[1] !== undefined) {
        options.push({ name: `--${long[1]}`, value: argument });
        continue;
      }
      if (argument.value.kind !== 'literal' && /^["']?[$`]/.test(argument.text)) mayBeOptions.push(argument);
      if (syntax.stopAtOperand === true) return { options, operands, mayBeOptions, rest: index };
      operands.push(argument);
      continue;
    }
    if (text.startsWith('--')) {
      const equals = text.indexOf('=');
      if (equals >= 0) {
        options.push({ name: text.slice(0, equals), value: subArgument(argument, equals + 1) });
      } else if ((syntax.valuedLong ?? []).some((full) => longMatches(text, full))) {
        const value = args[index + 1] ?? null;
        options.push({ name: text, value });
        if (value !== null) index += 1;
      } else {
        options.push({ name: text, value: null });
      }
      continue;
    }
    for (let position = 1; position < text.length; position += 1) {
      const letter = text.charAt(position);
      const rest = position + 1 < text.length ? subArgument(argument, position + 1) : null;
      if (valued.includes(letter)) {
        const value = rest ?? args[index + 1] ?? null;
        if (rest === null && value !== null) index += 1;
        options.push({ name: `-${letter}`, value });
        break;
      }
      if (attached.includes(letter)) {
        options.push({ name: `-${letter}`, value: rest });
        break;
      }
      options.push({ name: `-${letter}`, value: null });
    }
  }
  return { options, operands, mayBeOptions, rest: index };
}

/**
 * For a program with options that run, read or write something: an argument that may expand to
 * an option is an option nobody can see (CONTRACT §4: what cannot be resolved is high).
 */
export function reportHiddenOptions(engine: { report(level: 'high', reason: string): void }, name: string, parsed: ParsedCommand): void {
  for (const argument of parsed.mayBeOptions) engine.report('high', `an argument that cannot be known may be an option of ${name}: ${argument.text}`);
}

/** Whether an option is present; names are `-x` or `--long` (prefixes of long names match). */
export function hasOption(parsed: ParsedCommand, ...names: readonly string[]): boolean {
  return parsed.options.some((option) => names.some((name) => optionIs(option.name, name)));
}

export function optionValues(parsed: ParsedCommand, ...names: readonly string[]): Argument[] {
  return parsed.options.flatMap((option) =>
    option.value !== null && names.some((name) => optionIs(option.name, name)) ? [option.value] : [],
  );
}

function optionIs(given: string, name: string): boolean {
  return name.startsWith('--') ? given.startsWith('--') && longMatches(given, name) : given === name;
}

/** The literal text of an argument, or null. */
export function textOf(argument: Argument | undefined): string | null {
  return argument !== undefined && argument.value.kind === 'literal' ? argument.value.text : null;
}
