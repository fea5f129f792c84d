-- AlterTable
ALTER TABLE "PendingCommand" ADD COLUMN     "decidedAt" TIMESTAMP(3),
ADD COLUMN     "decidedBy" TEXT,
ADD COLUMN     "workingDirectory" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE INDEX "PendingCommand_status_expiresAt_idx" ON "PendingCommand"("status", "expiresAt");

