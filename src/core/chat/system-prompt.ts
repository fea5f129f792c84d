import type { PromptSection } from '../prompt-orders/prompt-order-schema.js';
import type { WorkspaceDescription } from '../workspaces/describe-workspace.js';

export const DEFAULT_SYSTEM_TEXT =
  'You are a helpful AI assistant for software work. Answer clearly and concisely; use Markdown for code.';

export interface OfferedTool {
  name: string;
  description: string;
}

function workspaceText(workspace: WorkspaceDescription | null): string {
  if (!workspace) return 'No workspace is active.';
  const lines = [
    `Active workspace: ${workspace.name}`,
    `Path: ${workspace.path}`,
    `Git: ${workspace.status === 'not_git' ? 'not a Git repository' : `branch ${workspace.branch || '(none)'}, ${workspace.status}`}`,
  ];
  if (workspace.entries.length > 0) {
    const names = workspace.entries.map((entry) => (entry.type === 'directory' ? `${entry.name}/` : entry.name));
    lines.push(`Top-level entries: ${names.join(', ')}${workspace.truncated ? ', …' : ''}`);
  }
  return lines.join('\n');
}

function toolsText(tools: readonly OfferedTool[]): string {
  if (tools.length === 0) return 'No tools are available in this conversation.';
  return ['Tools you can call:', ...tools.map((tool) => `- ${tool.name}: ${tool.description}`)].join('\n');
}

/** A section's own text, put before what the service generates for it. */
function withIntro(section: PromptSection, generated: string): string {
  return section.content?.trim() ? `${section.content.trim()}\n${generated}` : generated;
}

/**
 * The one system prompt (CONTRACT §7): the enabled `system`, `workspace_context`, `tools` and
 * `custom` sections, in the order's order, joined by blank lines. `conversation_history` and
 * `user_message` are the messages themselves, not prompt text.
 */
export function buildSystemPrompt(
  sections: readonly PromptSection[],
  workspace: WorkspaceDescription | null,
  tools: readonly OfferedTool[],
): string {
  const parts: string[] = [];
  for (const section of sections) {
    if (!section.enabled) continue;
    switch (section.type) {
      case 'system':
        parts.push(section.content?.trim() || DEFAULT_SYSTEM_TEXT);
        break;
      case 'workspace_context':
        parts.push(withIntro(section, workspaceText(workspace)));
        break;
      case 'tools':
        parts.push(withIntro(section, toolsText(tools)));
        break;
      case 'custom':
        if (section.content?.trim()) parts.push(section.content.trim());
        break;
      case 'conversation_history':
      case 'user_message':
        break;
    }
  }
  return parts.join('\n\n');
}
