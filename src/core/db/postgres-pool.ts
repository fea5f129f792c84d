import type { Pool, PoolClient, PoolConfig } from 'pg';

/**
 * A pg pool that takes back a checked-out connection once it has died. @prisma/adapter-pg hands
 * a transaction's client back only on commit or rollback, and a connection reset in the middle of
 * a transaction can leave it with neither: without this, each such reset kept one of the pool's
 * connections checked out until a restart (and held the stop in `pool.end()`). The client is
 * released with an error, which makes the pool drop it, and its later release by the adapter
 * becomes a no-op instead of pg's "released twice" error.
 */
export function createPostgresPool(PoolClass: new (config: PoolConfig) => Pool, config: PoolConfig): Pool {
  const pool = new PoolClass(config);
  const checkedOut = new Set<PoolClient>();
  const watched = new WeakSet<PoolClient>();
  pool.on('acquire', (client) => {
    checkedOut.add(client);
    if (watched.has(client)) return;
    watched.add(client);
    const reclaim = () => {
      if (!checkedOut.has(client)) return;
      checkedOut.delete(client);
      client.release(new Error('The database connection ended while checked out'));
      client.release = () => undefined;
    };
    // A connection error on a checked-out client with no listener would throw out of pg's socket
    // handler (taking the process down, and skipping the 'end' that follows); the query that was
    // running has already been failed with it.
    client.on('error', reclaim);
    client.once('end', reclaim);
  });
  pool.on('release', (_error, client) => {
    checkedOut.delete(client);
  });
  // An idle connection the server drops must not take the process down; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}
