import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DoneMetadata } from '../chat/chat-events.js';
import type { RiskLevel } from '../security/risk-levels.js';
import { BoundedLabels } from './bounded-labels.js';
import { EventLoopLag } from './event-loop-lag.js';
import { RequestSeries } from './request-series.js';

/** The WebSocket channels of CONTRACT §8: `/ws`, `/ws/markdown-stream`, `/api/terminals/:id/ws`. */
export const socketChannels = ['main', 'markdown', 'terminal'] as const;
export type SocketChannel = (typeof socketChannels)[number];

/**
 * What the command pipeline decided (CONTRACT §4), named as its audit entries name it. A confirmed
 * command counts once as `confirmed` and, when it is then sent to its shell, once as `executed`.
 */
export type CommandVerdict = 'executed' | 'held' | 'refused' | 'aborted' | 'confirmed' | 'rejected' | 'dropped';

/** Counts read when scraped, from the objects that own them, so they can never drift. */
export interface LiveCounts {
  runningStreams(): number;
  openTerminals(): number;
}

/** The label every unknown path shares, so scanners cannot grow the series without bound. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Caller-named models kept under their own name; later ones count as `other`. */
const MAX_MODEL_LABELS = 100;

/**
 * One service instance's Prometheus metrics, in a registry of its own rather than prom-client's
 * global one: tests start several services in one process, and each must report only itself.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: RequestSeries;
  private readonly sockets: Gauge<'channel'>;
  private readonly socketsOpened: Counter<'channel'>;
  private readonly exchanges: Counter<'provider' | 'finish_reason'>;
  private readonly tokens: Counter<'provider' | 'model' | 'type'>;
  private readonly commands: Counter<'risk' | 'verdict'>;
  private readonly terminalsCreated: Counter;
  private readonly models = new BoundedLabels(MAX_MODEL_LABELS);
  private readonly loopLag: EventLoopLag;

  constructor(live: LiveCounts) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestSeries(
      new Counter({
        name: 'assistant_http_requests_total',
        help: 'HTTP requests answered, by method, route template and status',
        labelNames: ['method', 'route', 'status'],
        registers,
      }),
      new Histogram({
        name: 'assistant_http_request_duration_seconds',
        help: 'Time from a request reaching the service until its reply ended, by method and route template',
        labelNames: ['method', 'route'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers,
      }),
    );
    new Gauge({
      name: 'assistant_chat_streams_active',
      help: 'Chat generations running on this instance (any path or transport)',
      registers,
      collect() {
        this.set(live.runningStreams());
      },
    });
    this.sockets = new Gauge({ name: 'assistant_websocket_connections', help: 'Open WebSocket connections, by channel', labelNames: ['channel'], registers });
    this.socketsOpened = new Counter({
      name: 'assistant_websocket_connections_opened_total',
      help: 'WebSocket connections accepted, by channel',
      labelNames: ['channel'],
      registers,
    });
    for (const channel of socketChannels) {
      this.sockets.set({ channel }, 0);
      this.socketsOpened.inc({ channel }, 0);
    }
    this.exchanges = new Counter({
      name: 'assistant_chat_exchanges_total',
      help: 'Chat exchanges that ended with their done event, by provider and finish reason',
      labelNames: ['provider', 'finish_reason'],
      registers,
    });
    this.tokens = new Counter({
      name: 'assistant_chat_tokens_total',
      help: 'Tokens the providers reported for finished exchanges, by provider, model and type (input or output)',
      labelNames: ['provider', 'model', 'type'],
      registers,
    });
    this.commands = new Counter({
      name: 'assistant_commands_total',
      help: 'Command pipeline decisions, by risk level and verdict',
      labelNames: ['risk', 'verdict'],
      registers,
    });
    new Gauge({
      name: 'assistant_terminal_sessions_open',
      help: 'Terminal sessions of this instance whose shell has not exited',
      registers,
      collect() {
        this.set(live.openTerminals());
      },
    });
    this.terminalsCreated = new Counter({ name: 'assistant_terminal_sessions_created_total', help: 'Terminal sessions started', registers });
    this.loopLag = new EventLoopLag(this.registry);
  }

  /** Stops the timers that feed the metrics (the service's stop). */
  stop(): void {
    this.loopLag.stop();
  }

  /** One answered HTTP request; `route` must be a template (or UNMATCHED_ROUTE), never a raw URL. */
  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    this.requests.record(method, route, status, seconds);
  }

  socketOpened(channel: SocketChannel): void {
    this.sockets.inc({ channel });
    this.socketsOpened.inc({ channel });
  }

  socketClosed(channel: SocketChannel): void {
    this.sockets.dec({ channel });
  }

  /** An exchange's end, with the usage its provider reported. */
  exchangeDone(done: DoneMetadata): void {
    const { provider } = done;
    this.exchanges.inc({ provider, finish_reason: done.finishReason });
    const model = this.models.label(done.model);
    // Adding zero still creates the series; an exchange that used none leaves no trace here.
    if (done.usage.inputTokens > 0) this.tokens.inc({ provider, model, type: 'input' }, done.usage.inputTokens);
    if (done.usage.outputTokens > 0) this.tokens.inc({ provider, model, type: 'output' }, done.usage.outputTokens);
  }

  commandDecided(risk: RiskLevel, verdict: CommandVerdict): void {
    this.commands.inc({ risk, verdict });
  }

  terminalCreated(): void {
    this.terminalsCreated.inc();
  }
}
