import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Why a message from Redis was not believed; logged, and never with the message itself. */
export type Refusal = 'unsigned' | 'bad_signature' | 'stale' | 'replayed';

export type OpenedMessage = { ok: true; payload: string } | { ok: false; reason: Refusal };

/**
 * How far a message's seal may be from the receiver's clock. It bounds how long a captured
 * message can be replayed, so it is short; the instances' clocks must agree within it (NTP).
 */
export const MESSAGE_WINDOW_MS = 60_000;

const version = 'v1';
const timestampPattern = /^\d{1,15}$/;
const noncePattern = /^[A-Za-z0-9_-]{16}$/;
const macPattern = /^[A-Za-z0-9_-]{43}$/;
const macBytes = 32;

/**
 * Seals and opens the messages instances exchange over Redis pub/sub (CONTRACT §11 "Instances").
 * Whoever reaches Redis can publish on its channels, and a carried call runs a procedure as the
 * user it names, so a message is believed only when its HMAC-SHA256 under CLUSTER_SECRET covers
 * the channel it arrived on (a call sealed for one instance cannot be redirected to another), the
 * time it was sealed (a captured message is worthless after the window) and the payload. A random
 * nonce, covered too, lets a receiver refuse a second delivery of one message inside the window.
 *
 * A sealed message is `v1.<ms timestamp>.<nonce>.<mac>.<payload>`: the fields before the payload
 * have fixed shapes, so the MAC input cannot be shifted between them.
 */
export class ClusterSignature {
  /** A KeyObject, so the secret never shows in an inspected or logged object. */
  private readonly key: KeyObject;
  /** Nonces accepted, with the time after which their timestamp alone refuses them. */
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    secret: string,
    private readonly windowMs: number = MESSAGE_WINDOW_MS,
    private readonly now: () => number = () => Date.now(),
  ) {
    if (secret.length === 0) throw new Error('the cluster secret is empty');
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  seal(channel: string, payload: string): string {
    const timestamp = String(this.now());
    const nonce = randomBytes(12).toString('base64url');
    const mac = this.mac(channel, timestamp, nonce, payload).toString('base64url');
    return `${version}.${timestamp}.${nonce}.${mac}.${payload}`;
  }

  /** The payload of a message sealed with this secret for `channel`, recently, and not seen before. */
  open(channel: string, raw: string): OpenedMessage {
    const parts = splitSealed(raw);
    if (!parts) return { ok: false, reason: 'unsigned' };
    const { timestamp, nonce, mac, payload } = parts;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(channel, timestamp, nonce, payload);
    // Checked before the timestamp is judged: until then it is only the sender's word.
    if (given.length !== macBytes || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
    const sealedAt = Number(timestamp);
    const now = this.now();
    if (Math.abs(now - sealedAt) > this.windowMs) return { ok: false, reason: 'stale' };
    this.forgetExpired(now);
    if (this.seen.has(nonce)) return { ok: false, reason: 'replayed' };
    this.seen.set(nonce, sealedAt + this.windowMs);
    return { ok: true, payload };
  }

  private mac(channel: string, timestamp: string, nonce: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${version}\n${channel}\n${timestamp}\n${nonce}\n`).update(payload).digest();
  }

  /** Once per window, so the memory of nonces holds about two windows of messages at most. */
  private forgetExpired(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [nonce, expiresAt] of this.seen) {
      if (expiresAt < now) this.seen.delete(nonce);
    }
  }
}

function splitSealed(raw: string): { timestamp: string; nonce: string; mac: string; payload: string } | null {
  const fields: string[] = [];
  let start = 0;
  for (let i = 0; i < 4; i++) {
    const dot = raw.indexOf('.', start);
    // Every field before the payload is short: a message without them is not searched through.
    if (dot < 0 || dot - start > 64) return null;
    fields.push(raw.slice(start, dot));
    start = dot + 1;
  }
  const [tag, timestamp, nonce, mac] = fields;
  if (tag !== version || timestamp === undefined || nonce === undefined || mac === undefined) return null;
  if (!timestampPattern.test(timestamp) || !noncePattern.test(nonce) || !macPattern.test(mac)) return null;
  return { timestamp, nonce, mac, payload: raw.slice(start) };
}
