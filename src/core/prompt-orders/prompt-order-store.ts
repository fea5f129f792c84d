import type { PromptOrder as PromptOrderRow, Prisma } from '../../generated/sqlite/client.js';
import { AppError } from '../errors/app-error.js';
import { isId, newId } from '../ids.js';
import type { Store } from '../db/store.js';
import type { PromptOrder, PromptOrderInput, PromptSection } from './prompt-order-schema.js';

function toPromptOrder(row: PromptOrderRow): PromptOrder {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sections: row.sections as unknown as PromptSection[],
    isDefault: row.isDefault,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function listPromptOrders(store: Store): Promise<PromptOrder[]> {
  const rows = await store.db.promptOrder.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(toPromptOrder);
}

/** Creates an order, or updates the one named by `id` (unknown → 404). Marking one default clears the others. */
export async function savePromptOrder(store: Store, input: PromptOrderInput): Promise<string> {
  const sections: PromptSection[] = input.sections.map((section) => ({
    type: section.type,
    ...(section.content !== undefined ? { content: section.content } : {}),
    enabled: section.enabled ?? true,
  }));
  const data = {
    name: input.name,
    description: input.description ?? '',
    sections: sections as unknown as Prisma.InputJsonArray,
    isDefault: input.isDefault ?? false,
  };
  return store.db.$transaction(async (tx) => {
    let id = input.id;
    if (id !== undefined) {
      const existing = isId(id) ? await tx.promptOrder.findUnique({ where: { id } }) : null;
      if (!existing) throw AppError.notFound('Prompt order');
      await tx.promptOrder.update({ where: { id }, data });
    } else {
      id = newId();
      await tx.promptOrder.create({ data: { id, ...data } });
    }
    if (data.isDefault) {
      await tx.promptOrder.updateMany({ where: { isDefault: true, id: { not: id } }, data: { isDefault: false } });
    }
    return id;
  });
}

export async function deletePromptOrder(store: Store, id: string): Promise<void> {
  const { count } = isId(id) ? await store.db.promptOrder.deleteMany({ where: { id } }) : { count: 0 };
  if (count === 0) throw AppError.notFound('Prompt order');
}
