import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP proxy on 127.0.0.1 that a test puts between the service and one of its dependencies
// (PostgreSQL, Redis) and cuts at will: every open connection is reset at once, and new ones are
// refused until it is restored, as when the dependency's host goes away and comes back.

export interface TcpProxy {
  /** `host:port` of the proxy, to put in the dependency's URL. */
  address: string;
  /** Connections the proxy has forwarded so far. */
  connections(): number;
  cut(): void;
  restore(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let forwarded = 0;
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    forwarded++;
    const upstream = connect(targetPort, targetHost);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      open.add(from);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        open.delete(from);
        to.destroy();
      });
      from.pipe(to);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    connections: () => forwarded,
    cut: () => {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore: () => {
      cut = false;
    },
    async [Symbol.asyncDispose]() {
      cut = true;
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
