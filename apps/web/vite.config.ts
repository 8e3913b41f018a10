import { defineConfig } from 'vite';

export default defineConfig({
  resolve: { conditions: ['@netplay/source', 'module', 'browser', 'import', 'default'] },
  build: { outDir: 'dist', emptyOutDir: true },
});
