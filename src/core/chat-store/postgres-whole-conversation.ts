import type pg from 'pg';
import { isPostgresUnavailable } from '../db/database-unavailable.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { WholeConversation } from './chat-store.js';

// A conversation stored whole on PostgreSQL (an import of up to MAX_IMPORT_MESSAGES messages, a
// /v1 transcript): one transaction on one pooled connection, so readers see it whole or not at all
// and a process that dies part way leaves nothing (the server rolls back the dropped connection).
// The messages go in statements of ROWS_PER_STATEMENT rows, so no single step of JavaScript
// (building and serialising the parameter arrays) holds the event loop for long; the loop serves
// other requests while each statement runs on the server.

const ROWS_PER_STATEMENT = 1000;
/**
 * Imports running at once on this instance. Each holds a pooled connection until it commits; the
 * rest wait their turn, so imports alone can never take every connection from other requests.
 */
const CONCURRENT_IMPORTS = 2;

const headSql = `
INSERT INTO "Conversation" (id, "ownerId", title, metadata, "messageCount", "nextSeq", "createdAt", "lastModified")
VALUES ($1::text, $2::text, $3::text, $4::jsonb, $5::int, $6::int, $7::timestamp(3), $7::timestamp(3))`;

const messagesSql = `
INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", streaming, "createdAt")
SELECT m.id, $1::text, $2::int + m.ord::int - 1, m.role, m.content, m."toolCalls"::jsonb, false, $3::timestamp(3)
FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS m(id, role, content, "toolCalls", ord)`;

/** A first-come, first-served limit on how many callers hold something at once. */
class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async take(): Promise<() => void> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      // The turn passes straight to the next in line: `running` stays as it is.
      if (next) next();
      else this.running--;
    };
  }
}

export class PostgresWholeConversation {
  private readonly turns = new Turns(CONCURRENT_IMPORTS);

  constructor(private readonly pool: pg.Pool) {}

  async insert(conversation: WholeConversation): Promise<void> {
    const release = await this.turns.take();
    try {
      const client = await this.connect();
      let failure: unknown;
      try {
        await this.write(client, conversation);
      } catch (error) {
        failure = error;
        await client.query('ROLLBACK').catch(() => undefined);
        throw unavailableOr(error);
      } finally {
        // A connection that failed part way is dropped rather than reused in an unknown state.
        client.release(failure instanceof Error ? failure : undefined);
      }
    } finally {
      release();
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw unavailableOr(error);
    }
  }

  private async write(client: pg.PoolClient, conversation: WholeConversation): Promise<void> {
    const at = new Date().toISOString();
    const { messages } = conversation;
    await client.query('BEGIN');
    await client.query({
      name: 'chat.wholeConversation',
      text: headSql,
      values: [conversation.id, conversation.ownerId, conversation.title, conversation.metadata, conversation.messageCount, messages.length, at],
    });
    for (let from = 0; from < messages.length; from += ROWS_PER_STATEMENT) {
      const slice = messages.slice(from, from + ROWS_PER_STATEMENT);
      await client.query({
        name: 'chat.wholeConversationMessages',
        text: messagesSql,
        values: [
          conversation.id,
          from,
          at,
          slice.map(() => newId()),
          slice.map((message) => message.role),
          slice.map((message) => message.content),
          slice.map((message) => message.toolCalls),
        ],
      });
    }
    await client.query('COMMIT');
  }
}

function unavailableOr(error: unknown): unknown {
  return isPostgresUnavailable(error) ? new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', { cause: error }) : error;
}
