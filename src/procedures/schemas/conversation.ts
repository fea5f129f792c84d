import { z } from 'zod';
import { providerNames } from '../../core/config/env-schema.js';
import { messageRoles } from '../../core/conversations/conversation-views.js';

export const conversationSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: z.string(),
  lastModified: z.string(),
  messageCount: z.number().int(),
});

export const messageSchema = z.object({
  id: z.string(),
  role: z.enum(messageRoles),
  content: z.string(),
  createdAt: z.string(),
  toolCalls: z.array(z.unknown()).optional(),
  model: z.string().optional(),
  provider: z.string().optional(),
  finishReason: z.string().optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
  supersededBy: z.string().optional(),
});

export const workspaceRefSchema = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string(),
  branch: z.string(),
  status: z.string(),
});

/** CONTRACT §3's context object. */
export const contextSchema = z.object({
  conversationId: z.string(),
  messageCount: z.number().int(),
  title: z.string(),
  workspace: workspaceRefSchema.nullable(),
  model: z.object({ name: z.string(), provider: z.enum(providerNames) }),
});

export const titleSchema = z.string().max(200);
