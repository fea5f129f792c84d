-- Only the answers still streaming are indexed (issue 24). The full index on "streaming" took an
-- entry for every message stored and was rewritten at every answer's close, though almost every
-- row is closed and its one reader, closeInterruptedAnswers, wants only the open ones: their
-- writers, then each dead writer's answers. This partial index holds those few rows alone, keyed
-- by writer; closed messages cost it nothing (one WAL record less per message stored or answer
-- closed; with 100,000 closed messages the full index took 648 kB, this one 8 kB).
--
-- Raw SQL that Prisma's schema does not describe (as the conversation_search migration's
-- indexes): prisma/models.prisma leaves "streaming" unindexed and says why.
-- DropIndex
DROP INDEX "Message_streaming_idx";

CREATE INDEX "Message_streaming_writer_idx" ON "Message"("writer") WHERE "streaming";
