import { idKinds, type KnownIds } from './item-ids.js';

/** xorshift32 (Marsaglia): tiny, fast and fully determined by its seed. */
export class Rng {
  private state: number;

  constructor(
    seed: number,
    private readonly known: KnownIds = new Map(),
  ) {
    this.state = seed >>> 0 || 0x6d2b79f5;
    for (let warm = 0; warm < 8; warm++) this.next();
  }

  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** An id for a field or parameter of this name: one the service handed out, or a fresh unknown one. */
  id(name: string): string {
    const kind = idKinds[name];
    const ids = kind === undefined ? undefined : this.known.get(kind);
    return ids?.length && this.chance(0.5) ? this.pick(ids) : this.uuid();
  }

  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16));
    hex[12] = '4';
    hex[16] = (8 + this.int(0, 3)).toString(16);
    const s = hex.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}
