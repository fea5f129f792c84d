import { ACTIVE_MODEL_KEY as SETTING_KEY } from '../chat-store/chat-store.js';
import type { Config } from '../config/load-config.js';
import { providerNames, type ProviderName } from '../config/env-schema.js';
import type { Store } from '../db/store.js';

export interface ActiveModel {
  name: string;
  provider: ProviderName;
}

/** A stored active-model value, or null when it is not one. */
export function parseActiveModel(value: unknown): ActiveModel | null {
  if (value === null || typeof value !== 'object') return null;
  const { name, provider } = value as Record<string, unknown>;
  if (typeof name !== 'string' || !providerNames.includes(provider as ProviderName)) return null;
  return { name, provider: provider as ProviderName };
}

/**
 * The shared active model. AI_MODEL_PROVIDER / AI_MODEL_NAME seed it at the very first start
 * only; afterwards the stored choice wins across restarts (CONTRACT §1).
 */
export async function ensureActiveModel(store: Store, config: Config): Promise<ActiveModel> {
  const seed: ActiveModel = { name: config.AI_MODEL_NAME, provider: config.AI_MODEL_PROVIDER };
  const row = await store.db.setting.upsert({
    where: { key: SETTING_KEY },
    create: { key: SETTING_KEY, value: { ...seed } },
    update: {},
  });
  return parseActiveModel(row.value) ?? seed;
}

/** The stored active model, or the configured seed before one was ever stored. */
export function activeModelOrSeed(stored: ActiveModel | null, config: Config): ActiveModel {
  return stored ?? { name: config.AI_MODEL_NAME, provider: config.AI_MODEL_PROVIDER };
}

export async function getActiveModel(store: Store, config: Config): Promise<ActiveModel> {
  const row = await store.db.setting.findUnique({ where: { key: SETTING_KEY } });
  return activeModelOrSeed(parseActiveModel(row?.value), config);
}

/** Stores the shared active model; it outlives restarts (CONTRACT §7). */
export async function setActiveModel(store: Store, model: ActiveModel): Promise<ActiveModel> {
  const value = { name: model.name, provider: model.provider };
  await store.db.setting.upsert({
    where: { key: SETTING_KEY },
    create: { key: SETTING_KEY, value },
    update: { value },
  });
  return value;
}
