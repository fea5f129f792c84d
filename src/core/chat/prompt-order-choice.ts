import { AppError } from '../errors/app-error.js';
import { builtInPromptOrder, type PromptOrderInput, type PromptSection } from '../prompt-orders/prompt-order-schema.js';

/** A chat body's `promptOrders`: a stored order by id, or one given inline (already validated). */
export type PromptOrderSelection = { orderId: string } | { order: PromptOrderInput } | undefined;

/** The stored order the selection asks the chat store for: the named one, else the stored default. */
export function storedOrderId(selection: PromptOrderSelection): string | undefined {
  return selection && 'orderId' in selection ? selection.orderId : undefined;
}

/**
 * The sections a chat request is assembled by (CONTRACT §7): the named order (unknown → 400), the
 * inline one, the stored default, or the built-in default. `stored` is what the chat store found
 * for storedOrderId(selection).
 */
export function choosePromptSections(stored: PromptSection[] | null, selection: PromptOrderSelection): PromptSection[] {
  if (selection && 'orderId' in selection) {
    if (!stored) throw AppError.invalid(`Unknown prompt order ${selection.orderId}`, { field: 'promptOrders.orderId' });
    return stored;
  }
  if (selection && 'order' in selection) {
    return selection.order.sections.map((section) => ({ ...section, enabled: section.enabled ?? true }));
  }
  // Stored sections always carry `enabled`: the store fills it in.
  return stored ?? builtInPromptOrder.sections;
}
