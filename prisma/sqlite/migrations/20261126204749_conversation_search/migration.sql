-- Conversation search (issue 20): an FTS5 index of conversation titles and message contents with
-- the trigram tokenizer, so any substring of three or more characters is looked up instead of
-- scanned. Triggers keep it in step with every write, whoever makes it (Prisma, the chat store's
-- driver statements, an import), and this migration fills it from the rows already stored.
--
-- These objects are raw SQL that Prisma's schema does not describe: `npm run db:check` compares
-- only the Prisma schemas, and Prisma never diffs against the database here, so they are left
-- alone by later migrations. A later migration that rebuilds "Message" or "Conversation" (Prisma's
-- SQLite table redefinition) drops these triggers with the table and must create them again:
-- tests/integration/conversation-search.test.ts ("follows every write") fails until it does.

-- The index keeps no copy of the text (contentless); deleting a row needs its index rowid,
-- found through this table, which ties each indexed text to its message (or, with no message,
-- to its conversation's title). Message rowids are not used: VACUUM may renumber them.
CREATE TABLE "ConversationSearchEntry" (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "conversationId" TEXT NOT NULL,
    "messageId" TEXT
);
CREATE UNIQUE INDEX "ConversationSearchEntry_messageId_key" ON "ConversationSearchEntry"("messageId");
CREATE UNIQUE INDEX "ConversationSearchEntry_title_key" ON "ConversationSearchEntry"("conversationId") WHERE "messageId" IS NULL;

-- remove_diacritics 0: é is not e, as on PostgreSQL. case_sensitive 0 folds case as
-- src/core/chat-store/conversation-search-folding-table.ts records.
CREATE VIRTUAL TABLE "ConversationSearch" USING fts5(
    "text",
    content = '',
    contentless_delete = 1,
    tokenize = 'trigram case_sensitive 0 remove_diacritics 0'
);

-- A message is indexed by its first 4,096 characters: indexing is synchronous, in the writer's
-- commit, and a 100,000-character question took 60–370 ms of the event loop to index whole (and a
-- long answer is re-indexed at every rewrite while it streams). The rest of a longer message is
-- searched by the lookup itself, over the messages this partial index lists
-- (sqlite-conversation-reads-lookup.ts), so a search still finds text anywhere in a message. The
-- length and its test are repeated word for word there, which SQLite needs to use the index.
CREATE INDEX "Message_long_idx" ON "Message"("conversationId") WHERE length("content") > 4096;

CREATE TRIGGER "Message_search_insert" AFTER INSERT ON "Message" BEGIN
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
    INSERT INTO "ConversationSearch" (rowid, "text") VALUES (last_insert_rowid(), substr(new."content", 1, 4096));
END;

-- A growing answer is rewritten every 250 ms while it streams; each write replaces its entry.
CREATE TRIGGER "Message_search_update" AFTER UPDATE OF "id", "conversationId", "content" ON "Message" BEGIN
    DELETE FROM "ConversationSearch" WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "messageId" = old."id");
    DELETE FROM "ConversationSearchEntry" WHERE "messageId" = old."id";
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
    INSERT INTO "ConversationSearch" (rowid, "text") VALUES (last_insert_rowid(), substr(new."content", 1, 4096));
END;

CREATE TRIGGER "Message_search_delete" AFTER DELETE ON "Message" BEGIN
    DELETE FROM "ConversationSearch" WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "messageId" = old."id");
    DELETE FROM "ConversationSearchEntry" WHERE "messageId" = old."id";
END;

CREATE TRIGGER "Conversation_search_insert" AFTER INSERT ON "Conversation" WHEN new."title" <> '' BEGIN
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (new."id", NULL);
    INSERT INTO "ConversationSearch" (rowid, "text") VALUES (last_insert_rowid(), new."title");
END;

CREATE TRIGGER "Conversation_search_update" AFTER UPDATE OF "id", "title" ON "Conversation" BEGIN
    DELETE FROM "ConversationSearch"
        WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL);
    DELETE FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL;
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") SELECT new."id", NULL WHERE new."title" <> '';
    INSERT INTO "ConversationSearch" (rowid, "text") SELECT last_insert_rowid(), new."title" WHERE new."title" <> '';
END;

CREATE TRIGGER "Conversation_search_delete" AFTER DELETE ON "Conversation" BEGIN
    DELETE FROM "ConversationSearch"
        WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL);
    DELETE FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL;
END;

-- The rows stored before this migration.
INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") SELECT "conversationId", "id" FROM "Message";
INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") SELECT "id", NULL FROM "Conversation" WHERE "title" <> '';
INSERT INTO "ConversationSearch" (rowid, "text")
    SELECT e."id", substr(m."content", 1, 4096) FROM "ConversationSearchEntry" e JOIN "Message" m ON m."id" = e."messageId";
INSERT INTO "ConversationSearch" (rowid, "text")
    SELECT e."id", c."title" FROM "ConversationSearchEntry" e JOIN "Conversation" c ON c."id" = e."conversationId" WHERE e."messageId" IS NULL;

-- The listed conversations (CONTRACT §7 leaves out the empty untitled ones) in list order, so a
-- list's total is counted and its offset skipped in this index alone, and a `before` cursor
-- seeks in it. The queries repeat this WHERE clause word for word, which SQLite requires.
CREATE INDEX "Conversation_listed_idx" ON "Conversation"("ownerId", "lastModified" DESC, "id")
    WHERE "messageCount" > 0 OR "title" <> '';
