// Types of scripts/test-tiers.mjs for the TypeScript files that import it.
export interface Tier {
  dirs: string[];
  budgetSeconds: number;
  concurrency: number;
  env?: Record<string, string>;
  about: string;
}
export const TIERS: Record<'fast' | 'slow' | 'e2e' | 'soak', Tier>;
export function declaredBudget(text: string): number | undefined;
