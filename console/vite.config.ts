// The console's bundle: served by the api under /console from dist/console (src/api/console/serve-console.ts).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // No inline scripts or styles: the page's Content-Security-Policy allows only files of this origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rollupOptions: {
      // React Server Components' "use client" markers of the libraries mean nothing in this bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
