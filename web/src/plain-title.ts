/**
 * A title as plain text. Default titles are cut from the first question, which is often Markdown
 * (`# Plan **v2**`); the page shows words, not the syntax around them. Only the marks are removed:
 * `snake_case` and `2 * 3` keep their characters.
 */
export function plainTitle(title: string): string {
  return (
    title
      // Images and links keep their text.
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      // Block marks at the start: headings, quotes, list bullets.
      .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+)+/, '')
      .replace(/`+([^`]+)`+/g, '$1')
      .replace(/(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      // Single emphasis only where it cannot be part of a word (snake_case) or arithmetic (2 * 3).
      .replace(/(^|[^\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g, '$1$2')
      .replace(/(^|[^\w])_(?=\S)([^_]+?)(?<=\S)_(?!\w)/g, '$1$2')
      .replace(/<\/?[a-z][^>]*>/gi, '')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** "1 message", "2 messages". */
export function countOf(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
