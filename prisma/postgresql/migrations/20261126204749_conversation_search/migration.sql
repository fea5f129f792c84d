-- Conversation search (issue 20): pg_trgm GIN indexes on conversation titles and message
-- contents, which the search's case-insensitive regular expressions use for any text with three
-- word characters in a row (src/core/chat-store/conversation-search-patterns.ts). PostgreSQL keeps
-- them in step with every write itself.
--
-- These objects are raw SQL that Prisma's schema does not describe: `npm run db:check` compares
-- only the Prisma schemas, and Prisma never diffs against the database here, so they are left
-- alone by later migrations.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX "Message_content_trgm_idx" ON "Message" USING gin ("content" gin_trgm_ops);
CREATE INDEX "Conversation_title_trgm_idx" ON "Conversation" USING gin ("title" gin_trgm_ops);

-- The listed conversations (CONTRACT §7 leaves out the empty untitled ones) in list order, so a
-- list's total is counted and its offset skipped in this index alone, and a `before` cursor
-- seeks in it.
CREATE INDEX "Conversation_listed_idx" ON "Conversation"("ownerId", "lastModified" DESC, "id")
    WHERE "messageCount" > 0 OR "title" <> '';
