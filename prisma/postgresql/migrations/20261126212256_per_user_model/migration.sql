-- Per-user active model (CONTRACT §12, issue 21): each user's own choice lives on their UserState
-- row; a user who never chose follows the service default, a shared setting.
ALTER TABLE "UserState" ADD COLUMN "activeModel" JSONB;

-- Before this change the one stored active model was everyone's: it becomes the service default,
-- so nobody's model changes on upgrade. A database that never stored one is seeded at start-up
-- from AI_MODEL_PROVIDER / AI_MODEL_NAME (src/core/models/active-model.ts).
UPDATE "Setting" SET "key" = 'defaultModel' WHERE "key" = 'activeModel';
