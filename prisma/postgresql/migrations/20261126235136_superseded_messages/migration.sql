-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "supersededBy" TEXT;

