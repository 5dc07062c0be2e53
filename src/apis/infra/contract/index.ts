export * from './v1.ts';
