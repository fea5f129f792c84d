import { z } from 'zod';
import { providerNames } from '../../core/config/env-schema.js';
import { modelStatuses, modelUnavailableReasons } from '../../core/models/model-entry.js';
import { headerSafeMessage, headerSafeText } from '../schemas/common.js';

export const providerSchema = z.enum(providerNames);

export const capabilitiesSchema = z.object({
  streaming: z.boolean(),
  tools: z.boolean(),
  vision: z.boolean(),
  contextWindow: z.number().int().optional(),
});

/**
 * An entry of every model list (CONTRACT §3): `progress` while downloading, `error` after a failed
 * download, `reason` beside `unavailable` when a caller's own apiKey makes it usable.
 */
export const modelEntrySchema = z.object({
  name: z.string(),
  status: z.enum(modelStatuses),
  provider: providerSchema,
  capabilities: capabilitiesSchema,
  progress: z.object({ completed: z.number(), total: z.number() }).optional(),
  error: z.string().optional(),
  reason: z.enum(modelUnavailableReasons).optional(),
});

export const modelListOutput = z.object({ models: z.array(modelEntrySchema) });

/** A model named by a request: a bare name, or `<provider>/<name>`. */
export const modelNameSchema = z.string().trim().min(1, 'modelName is required').max(500);

/** The caller's own key for a hosted provider's list (CONTRACT §1); it is never echoed or logged. */
export const apiKeyQuery = z.object({
  apiKey: z.string({ error: 'apiKey is required' }).trim().min(1, 'apiKey is required').max(1000).regex(headerSafeText, headerSafeMessage),
});
