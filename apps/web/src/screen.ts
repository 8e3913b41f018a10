import { type Framebuffer, framebufferToRgba } from '@netplay/core-wasm';

/** Draws framebuffers to a canvas (sized to the framebuffer, scaled up by CSS). */
export class Screen {
  private image: ImageData | undefined;
  private readonly ctx: CanvasRenderingContext2D;

  constructor(private readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext('2d');
    if (ctx === null) throw new Error('no 2D canvas context');
    this.ctx = ctx;
  }

  draw(fb: Framebuffer): void {
    if (this.image === undefined || this.image.width !== fb.width || this.image.height !== fb.height) {
      this.canvas.width = fb.width;
      this.canvas.height = fb.height;
      this.image = this.ctx.createImageData(fb.width, fb.height);
    }
    framebufferToRgba(fb, this.image.data);
    this.ctx.putImageData(this.image, 0, 0);
  }
}
