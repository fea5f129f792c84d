import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { RemoteStreams } from '../streams/remote-streams.js';
import { StreamMirror } from '../streams/stream-mirror.js';
import { ClusterBus } from './cluster-bus.js';
import { ClusterDirectory } from './cluster-directory.js';
import { ClusterSignature } from './cluster-signature.js';
import { RemoteCalls, type RemoteHandler } from './remote-calls.js';
import type { StampedEvent, UserEvents } from '../events/user-events.js';

/**
 * What lets several instances behind one load balancer act as one service (CONTRACT §9b): this
 * instance's id, the Redis pub/sub between them, calls carried to the instance that holds a
 * terminal or a generation, where each lives, and the Redis copy of every stream.
 */
export interface Cluster {
  /** New at every start (a restarted instance holds nothing of its former life). */
  instanceId: string;
  bus: ClusterBus;
  calls: RemoteCalls;
  directory: ClusterDirectory;
  mirror: StreamMirror;
  remoteStreams: RemoteStreams;
  /** Starts answering calls carried here and relaying user events both ways. */
  start(handler: RemoteHandler, events: UserEvents): Promise<void>;
  close(): Promise<void>;
}

const userEventsChannel = 'user-events';

interface RelayedUserEvent {
  from: string;
  userId: string | null;
  stamped: StampedEvent;
}

export function createCluster(
  redis: RedisConnection,
  instanceId: string,
  options: {
    retentionMs: number;
    commandTimeoutMs: number;
    /** CLUSTER_SECRET: signs every message between the instances. */
    secret: string | undefined;
  },
  logger: Logger,
): Cluster {
  const { retentionMs, secret } = options;
  // The configuration refuses REDIS_URL without it; a configuration built some other way must
  // not get an instance that believes whatever is published on Redis.
  if (secret === undefined) throw new Error('CLUSTER_SECRET is required with REDIS_URL: it signs the calls instances carry for each other');
  const bus = new ClusterBus(redis, logger, new ClusterSignature(secret));
  // A carried execute waits for its command, which COMMAND_TIMEOUT_MS bounds.
  const calls = new RemoteCalls(bus, instanceId, logger, options.commandTimeoutMs + 30_000);
  const mirror = new StreamMirror(redis, bus, instanceId, retentionMs, logger);
  return {
    instanceId,
    bus,
    calls,
    directory: new ClusterDirectory(redis, instanceId),
    mirror,
    remoteStreams: new RemoteStreams(redis, bus, calls),
    async start(handler, events) {
      await calls.listen(handler);
      await bus.subscribe(userEventsChannel, (message) => {
        const { from, userId, stamped } = message as RelayedUserEvent;
        if (from !== instanceId) events.deliver(userId, stamped);
      });
      events.relayTo((userId, stamped) => {
        const message: RelayedUserEvent = { from: instanceId, userId, stamped };
        // A push is a hint for live screens; while Redis is down other instances miss it, and
        // a reload shows the state anyway.
        bus.publish(userEventsChannel, message).catch(() => undefined);
      });
    },
    async close() {
      await mirror.flush();
      await calls.close();
      await bus.close();
    },
  };
}
