-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "device" TEXT,
ADD COLUMN     "gitEntries" TEXT,
ADD COLUMN     "inode" TEXT;

