-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_PendingCommand" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "userId" TEXT NOT NULL,
    "terminalId" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "risk" TEXT NOT NULL,
    "reasons" JSONB NOT NULL,
    "workingDirectory" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'pending',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "decidedBy" TEXT,
    "decidedAt" DATETIME
);
INSERT INTO "new_PendingCommand" ("command", "createdAt", "expiresAt", "id", "reasons", "risk", "status", "terminalId", "userId") SELECT "command", "createdAt", "expiresAt", "id", "reasons", "risk", "status", "terminalId", "userId" FROM "PendingCommand";
DROP TABLE "PendingCommand";
ALTER TABLE "new_PendingCommand" RENAME TO "PendingCommand";
CREATE INDEX "PendingCommand_userId_status_idx" ON "PendingCommand"("userId", "status");
CREATE INDEX "PendingCommand_status_expiresAt_idx" ON "PendingCommand"("status", "expiresAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

