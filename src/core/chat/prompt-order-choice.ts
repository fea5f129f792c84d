import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { builtInPromptOrder, type PromptOrderInput, type PromptSection } from '../prompt-orders/prompt-order-schema.js';
import { findDefaultPromptOrder, findPromptOrder } from '../prompt-orders/prompt-order-store.js';

/** A chat body's `promptOrders`: a stored order by id, or one given inline (already validated). */
export type PromptOrderSelection = { orderId: string } | { order: PromptOrderInput } | undefined;

/**
 * The sections a chat request is assembled by (CONTRACT §7): the named order (unknown → 400), the
 * inline one, the stored default, or the built-in default.
 */
export async function choosePromptSections(store: Store, selection: PromptOrderSelection): Promise<PromptSection[]> {
  if (selection && 'orderId' in selection) {
    const order = await findPromptOrder(store, selection.orderId);
    if (!order) throw AppError.invalid(`Unknown prompt order ${selection.orderId}`, { field: 'promptOrders.orderId' });
    return order.sections;
  }
  if (selection && 'order' in selection) {
    return selection.order.sections.map((section) => ({ ...section, enabled: section.enabled ?? true }));
  }
  const stored = await findDefaultPromptOrder(store);
  // Stored sections always carry `enabled`: the store fills it in.
  return (stored ?? builtInPromptOrder).sections;
}
