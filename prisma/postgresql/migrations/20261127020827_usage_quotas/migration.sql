-- CreateTable
CREATE TABLE "UsageEntry" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "inputTokens" INTEGER NOT NULL,
    "outputTokens" INTEGER NOT NULL,
    "estimated" BOOLEAN NOT NULL DEFAULT false,
    "costMicros" BIGINT,
    "outcome" TEXT NOT NULL,
    "conversationId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UsageEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageTotal" (
    "userId" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "periodStart" BIGINT NOT NULL,
    "tokens" BIGINT NOT NULL DEFAULT 0,
    "costMicros" BIGINT NOT NULL DEFAULT 0,
    "requests" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "UsageTotal_pkey" PRIMARY KEY ("userId","window","periodStart")
);

-- CreateTable
CREATE TABLE "QuotaLease" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,
    "costMicros" BIGINT NOT NULL,
    "instance" TEXT NOT NULL,
    "expiresAt" BIGINT NOT NULL,
    "startedAt" BIGINT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "inputEstimate" INTEGER NOT NULL,
    "answerId" TEXT,
    "conversationId" TEXT,

    CONSTRAINT "QuotaLease_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "UsageEntry_userId_createdAt_idx" ON "UsageEntry"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "UsageEntry_createdAt_idx" ON "UsageEntry"("createdAt");

-- CreateIndex
CREATE INDEX "UsageTotal_periodStart_idx" ON "UsageTotal"("periodStart");

-- CreateIndex
CREATE INDEX "QuotaLease_userId_idx" ON "QuotaLease"("userId");

-- CreateIndex
CREATE INDEX "QuotaLease_expiresAt_idx" ON "QuotaLease"("expiresAt");

