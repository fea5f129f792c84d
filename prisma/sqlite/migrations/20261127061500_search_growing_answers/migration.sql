-- A growing answer is no longer re-indexed at every write (issue 24): its row is rewritten every
-- 250 ms while it streams, and each rewrite re-indexed its text in the FTS5 index (the delete and
-- insert of "Message_search_update", 100–330 µs each, more than half the service's time with
-- 2,000 streams). It is indexed once, when it is stored whole ("streaming" = 0: closed, or
-- recovered after a crash). Until then the lookup reads the few rows this partial index lists
-- (the answers growing now) in full, as it reads the long messages
-- (sqlite-conversation-reads-long.ts), so a search still finds every word a growing answer holds.
-- The WHERE clause is repeated word for word there, which SQLite needs to use the index.
CREATE INDEX "Message_growing_idx" ON "Message"("conversationId") WHERE "streaming" = 1;

DROP TRIGGER "Message_search_insert";
CREATE TRIGGER "Message_search_insert" AFTER INSERT ON "Message" WHEN new."streaming" = 0 BEGIN
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
    INSERT INTO "ConversationSearch" (rowid, "text") VALUES (last_insert_rowid(), substr(new."content", 1, 4096));
END;

-- A growing answer has no entry yet: its delete finds none. One stored whole and then rewritten
-- (an edit, a regenerate's replacement) is re-indexed as before.
DROP TRIGGER "Message_search_update";
CREATE TRIGGER "Message_search_update" AFTER UPDATE OF "id", "conversationId", "content", "streaming" ON "Message" WHEN new."streaming" = 0 BEGIN
    DELETE FROM "ConversationSearch" WHERE rowid = (SELECT "id" FROM "ConversationSearchEntry" WHERE "messageId" = old."id");
    DELETE FROM "ConversationSearchEntry" WHERE "messageId" = old."id";
    INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (new."conversationId", new."id");
    INSERT INTO "ConversationSearch" (rowid, "text") VALUES (last_insert_rowid(), substr(new."content", 1, 4096));
END;

-- The answers growing when this migration runs lose the entries their first writes made.
DELETE FROM "ConversationSearch" WHERE rowid IN (
    SELECT e."id" FROM "ConversationSearchEntry" e JOIN "Message" m ON m."id" = e."messageId" WHERE m."streaming" = 1);
DELETE FROM "ConversationSearchEntry" WHERE "messageId" IN (SELECT "id" FROM "Message" WHERE "streaming" = 1);
