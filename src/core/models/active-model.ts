import { DEFAULT_MODEL_KEY } from '../chat-store/chat-store.js';
import type { Config } from '../config/load-config.js';
import { providerNames, type ProviderName } from '../config/env-schema.js';
import type { Store } from '../db/store.js';

// CONTRACT §12: each user has their own active model (UserState.activeModel); a user who never
// chose one follows the service default, a shared setting that a Lead changes. The chat stores
// read the same two places in their own statements (chat-store/*-chat-store.ts).

export interface ActiveModel {
  name: string;
  provider: ProviderName;
}

/** A stored model value, or null when it is not one. */
export function parseActiveModel(value: unknown): ActiveModel | null {
  if (value === null || typeof value !== 'object') return null;
  const { name, provider } = value as Record<string, unknown>;
  if (typeof name !== 'string' || !providerNames.includes(provider as ProviderName)) return null;
  return { name, provider: provider as ProviderName };
}

const configuredSeed = (config: Config): ActiveModel => ({ name: config.AI_MODEL_NAME, provider: config.AI_MODEL_PROVIDER });

/**
 * The service default. AI_MODEL_PROVIDER / AI_MODEL_NAME seed it at the very first start only;
 * afterwards the stored value wins across restarts (CONTRACT §1, §12).
 */
export async function ensureDefaultModel(store: Store, config: Config): Promise<ActiveModel> {
  const seed = configuredSeed(config);
  const row = await store.db.setting.upsert({
    where: { key: DEFAULT_MODEL_KEY },
    create: { key: DEFAULT_MODEL_KEY, value: { ...seed } },
    update: {},
  });
  return parseActiveModel(row.value) ?? seed;
}

/** A stored model, or the configured seed when there is none (before the default was ever stored). */
export function activeModelOrSeed(stored: ActiveModel | null, config: Config): ActiveModel {
  return stored ?? configuredSeed(config);
}

export async function getDefaultModel(store: Store, config: Config): Promise<ActiveModel> {
  const row = await store.db.setting.findUnique({ where: { key: DEFAULT_MODEL_KEY } });
  return activeModelOrSeed(parseActiveModel(row?.value), config);
}

/** The user's own choice, else the service default. */
export async function getActiveModel(store: Store, config: Config, userId: string): Promise<ActiveModel> {
  const state = await store.db.userState.findUnique({ where: { userId }, select: { activeModel: true } });
  return parseActiveModel(state?.activeModel) ?? (await getDefaultModel(store, config));
}

/** Stores the user's own active model; it outlives restarts and changes nobody else's (CONTRACT §12). */
export async function setActiveModel(store: Store, userId: string, model: ActiveModel): Promise<ActiveModel> {
  const value = { name: model.name, provider: model.provider };
  await store.db.userState.upsert({
    where: { userId },
    create: { userId, activeModel: value },
    update: { activeModel: value },
  });
  return value;
}

/** Stores the service default, which every user who never switched follows. */
export async function setDefaultModel(store: Store, model: ActiveModel): Promise<ActiveModel> {
  const value = { name: model.name, provider: model.provider };
  await store.db.setting.upsert({
    where: { key: DEFAULT_MODEL_KEY },
    create: { key: DEFAULT_MODEL_KEY, value },
    update: { value },
  });
  return value;
}
