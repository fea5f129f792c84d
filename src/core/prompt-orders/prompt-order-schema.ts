import { z } from 'zod';

// A prompt order decides how the system prompt and the history are assembled (CONTRACT §7).

export const sectionTypes = [
  'system',
  'workspace_context',
  'tools',
  'conversation_history',
  'custom',
  'user_message',
] as const;
export type SectionType = (typeof sectionTypes)[number];

/** Sections that must appear exactly once and can never be disabled. */
const requiredSections: readonly SectionType[] = ['conversation_history', 'user_message'];

export const promptSectionSchema = z.object({
  type: z.enum(sectionTypes),
  content: z.string().max(100_000).optional(),
  enabled: z.boolean().optional(),
});

export const promptOrderInputSchema = z
  .object({
    id: z.string().optional(),
    name: z.string().trim().min(1, 'must not be empty').max(200),
    description: z.string().max(2000).optional(),
    sections: z.array(promptSectionSchema).min(1).max(100),
    isDefault: z.boolean().optional(),
  })
  .superRefine((order, ctx) => {
    for (const type of requiredSections) {
      const indexes = order.sections.flatMap((section, index) => (section.type === type ? [index] : []));
      if (indexes.length !== 1) {
        ctx.addIssue({ code: 'custom', path: ['sections'], message: `${type} must appear exactly once` });
      }
      for (const index of indexes) {
        if (order.sections[index]?.enabled === false) {
          ctx.addIssue({ code: 'custom', path: ['sections', index, 'enabled'], message: `${type} cannot be disabled` });
        }
      }
    }
    const last = order.sections.at(-1);
    if (last && last.type !== 'user_message') {
      ctx.addIssue({ code: 'custom', path: ['sections', order.sections.length - 1, 'type'], message: 'user_message must be the last section' });
    }
  });

export type PromptOrderInput = z.output<typeof promptOrderInputSchema>;

export interface PromptSection {
  type: SectionType;
  content?: string;
  enabled: boolean;
}

export interface PromptOrder {
  id: string;
  name: string;
  description: string;
  sections: PromptSection[];
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The order used when none is stored as default: system, workspace_context, tools, history, message. */
export const builtInPromptOrder: Omit<PromptOrder, 'createdAt' | 'updatedAt'> = {
  id: 'built-in',
  name: 'Built-in default',
  description: 'Used when no prompt order is marked as default',
  sections: (['system', 'workspace_context', 'tools', 'conversation_history', 'user_message'] as const).map(
    (type) => ({ type, enabled: true }),
  ),
  isDefault: false,
};
