import { z } from 'zod';
import { ENV_NAME_PATTERN, isDangerousEnvName } from '../../core/security/dangerous-environment.js';

export const riskLevelSchema = z.enum(['low', 'medium', 'high', 'critical']);

export const terminalViewSchema = z.object({
  terminalId: z.string(),
  status: z.enum(['running', 'busy', 'exited']),
  workingDirectory: z.string(),
  lastExitCode: z.number().int().nullable(),
  createdAt: z.string(),
  lastActivity: z.string(),
  // Why the service ended the terminal itself (CONTRACT §11), once it did.
  details: z.object({ reason: z.string() }).optional(),
});

/**
 * A terminal's extra variables (CONTRACT §4): names as the shell allows them, and none of the
 * names that change what later commands run (one list with the risk analysis).
 */
export const environmentSchema = z
  .record(z.string().max(256), z.string().max(32_768))
  .refine((environment) => Object.keys(environment).length <= 100, { message: 'at most 100 variables' })
  .superRefine((environment, ctx) => {
    for (const name of Object.keys(environment)) {
      if (!ENV_NAME_PATTERN.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid variable name' });
      } else if (isDangerousEnvName(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'may not be set: it can change what commands run' });
      }
    }
  });

/** The execute reply of CONTRACT §4 in all its forms; `status: pending_confirmation` comes with 202. */
export const executeReplySchema = z.object({
  success: z.literal(true),
  output: z.string().optional(),
  exitCode: z.number().int().optional(),
  timedOut: z.boolean().optional(),
  status: z.enum(['busy', 'pending_confirmation']).optional(),
  executed: z.boolean().optional(),
  commandId: z.string().optional(),
  risk: riskLevelSchema.optional(),
  reasons: z.array(z.string()).optional(),
});

