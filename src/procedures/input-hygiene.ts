import { findInputProblem } from '../core/db/storable-input.js';
import { AppError } from '../core/errors/app-error.js';

/**
 * PostgreSQL's text and jsonb cannot hold U+0000 or lone surrogates and would fail the write with
 * a 500, while SQLite would store them: refusing them up front gives one 400 on both databases and
 * every transport, as the first step of input validation (the last step of each procedure's gate).
 */
export async function rejectUnstorableInput(getRawInput: () => Promise<unknown>): Promise<void> {
  const problem = findInputProblem(await getRawInput());
  if (problem) throw AppError.invalid('Invalid request', { issues: [problem] });
}
