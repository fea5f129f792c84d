-- AlterTable
ALTER TABLE "Message" ADD COLUMN "writer" TEXT;

