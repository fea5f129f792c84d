-- The search index is fed off the writer's commit (issue 24). Indexing a message in the FTS5
-- trigram index inside the commit that stores it cost more than storing it: FTS5 writes a new
-- segment of the index at every commit, so a question and its answer, committed apart, cost
-- about 260 µs of the 350 µs an exchange's writes took (measured alone on this schema: 330–460
-- µs per exchange with the index in the commit, 170–200 µs with a pending row instead; at eight
-- exchanges per commit 230–330 against 80–100 µs). A stored whole message now only gets a row in
-- "ConversationSearchPending"; the chat store's indexer (sqlite-search-indexer.ts) moves pending
-- rows into the index a few hundred at a time, in one segment, shortly after. Until then the
-- search reads the pending messages in full (sqlite-conversation-reads-long.ts), as it reads the
-- growing answers, so a stored word is found from the moment its commit ends. Whoever writes
-- (Prisma, the chat store, an import), the triggers below keep the pending rows in step.
--
-- Keyed by conversation first, so the search lists a conversation's pending messages in key
-- order with the owner's test on each conversation, and message ids (not rowids, which VACUUM may
-- renumber) tie a row to its message.
CREATE TABLE "ConversationSearchPending" (
    "conversationId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    PRIMARY KEY ("conversationId", "messageId")
) WITHOUT ROWID;

DROP TRIGGER "Message_search_insert";
CREATE TRIGGER "Message_search_insert" AFTER INSERT ON "Message" WHEN new."streaming" = 0 BEGIN
    INSERT OR IGNORE INTO "ConversationSearchPending" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
END;

-- A rewrite takes the message's old text out of the index at once (a search must not find what
-- it no longer says) and queues the new text.
DROP TRIGGER "Message_search_update";
CREATE TRIGGER "Message_search_update" AFTER UPDATE OF "id", "conversationId", "content", "streaming" ON "Message" WHEN new."streaming" = 0 BEGIN
    DELETE FROM "ConversationSearch" WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "messageId" = old."id");
    DELETE FROM "ConversationSearchEntry" WHERE "messageId" = old."id";
    DELETE FROM "ConversationSearchPending" WHERE "conversationId" = old."conversationId" AND "messageId" = old."id";
    INSERT OR IGNORE INTO "ConversationSearchPending" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
END;

DROP TRIGGER "Message_search_delete";
CREATE TRIGGER "Message_search_delete" AFTER DELETE ON "Message" BEGIN
    DELETE FROM "ConversationSearch" WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "messageId" = old."id");
    DELETE FROM "ConversationSearchEntry" WHERE "messageId" = old."id";
    DELETE FROM "ConversationSearchPending" WHERE "conversationId" = old."conversationId" AND "messageId" = old."id";
END;

-- Every question sets the title when it is empty (`title = CASE WHEN title = '' THEN … ELSE title
-- END`), and an UPDATE OF trigger fires whenever the column is assigned, changed or not: the
-- title was taken out of the index and put back at every question (about 100 µs each). Now only
-- a title or id that really changes is re-indexed.
DROP TRIGGER "Conversation_search_update";
CREATE TRIGGER "Conversation_search_update" AFTER UPDATE OF "id", "title" ON "Conversation"
WHEN old."id" IS NOT new."id" OR old."title" IS NOT new."title" BEGIN
    DELETE FROM "ConversationSearch"
        WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL);
    DELETE FROM "ConversationSearchEntry" WHERE "conversationId" = old."id" AND "messageId" IS NULL;
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") SELECT new."id", NULL WHERE new."title" <> '';
    INSERT INTO "ConversationSearch" (rowid, "text") SELECT last_insert_rowid(), new."title" WHERE new."title" <> '';
END;
