// The one definition of name order shared by both stores: case-insensitive, then by id.
export const nameSortKey = (label: string): string => label.toLowerCase();
