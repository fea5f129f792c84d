-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN "device" TEXT;
ALTER TABLE "Workspace" ADD COLUMN "gitEntries" TEXT;
ALTER TABLE "Workspace" ADD COLUMN "inode" TEXT;

