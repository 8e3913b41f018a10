@ netplay GBA test ROM (MIT, part of @netplay/core-libretro's tests; see the package README).
@ Assembled with arm-none-eabi-as/ld/objcopy (Debian package binutils-arm-none-eabi) by
@ scripts/build-test-roms.ts, which also writes the Nintendo logo and the header's complement
@ check byte (0xBD): this file leaves them zero.
@
@ Every frame (at the start of VBlank) it reads KEYINPUT and mixes it into RAM:
@   IWRAM 0x03000000  h, a 32-bit FNV-1 style mix: h = ((h + sram[2]) ^ keys) * 0x01000193 ^ frame
@   IWRAM 0x03000004  frame counter
@   IWRAM 0x03000008  the keys of the last frame (bit i = KEYINPUT bit i pressed: A B Select
@                     Start Right Left Up Down R L)
@   EWRAM 0x02000000  the keys of each of the last 256 frames (halfwords, indexed by frame % 256)
@   SRAM  0x0E000000  h's low two bytes and the frame counter's low byte (save type SRAM: the
@                     "SRAM_V" string below is how emulators detect it); the next frame reads
@                     the counter back into h, so the game depends on its save RAM
@   SRAM  0x0E000003  boot counter, incremented once at power-on
@ and shows h as the backdrop colour (display mode 0 with no layer on), so the screen changes
@ with the input.

        .arm
        .section .text
        .global _start
_start:
        b       start                   @ 0x00: entry point
        .space  156                     @ 0x04: Nintendo logo, written by the build script
        .ascii  "NETPLAYTEST\0"         @ 0xA0: title (12 bytes)
        .ascii  "ZNPE"                  @ 0xAC: game code
        .ascii  "00"                    @ 0xB0: maker code
        .byte   0x96                    @ 0xB2: fixed value
        .byte   0x00                    @ 0xB3: main unit code
        .byte   0x00                    @ 0xB4: device type
        .space  7                       @ 0xB5: reserved
        .byte   0x00                    @ 0xBC: software version
        .byte   0x00                    @ 0xBD: complement check, written by the build script
        .space  2                       @ 0xBE: reserved

start:                                  @ 0xC0
        mov     r0, #0x04000000         @ I/O registers
        mov     r1, #0
        strh    r1, [r0]                @ DISPCNT = 0: mode 0, no layer, the backdrop fills the screen
        mov     r4, #0x03000000         @ IWRAM
        mov     r5, #0x02000000         @ EWRAM
        mov     r6, #0x0E000000         @ SRAM
        ldrb    r1, [r6, #3]            @ count this boot in the save RAM
        add     r1, r1, #1
        strb    r1, [r6, #3]
        mov     r10, #0x05000000        @ palette RAM: entry 0 is the backdrop colour
        ldr     r7, =0x01000193         @ FNV prime
        ldr     r8, =0x811C9DC5         @ h: FNV offset basis
        mov     r9, #0                  @ frame counter
        ldr     r11, =0x3FF

frame:
wait_out:                               @ wait until VCOUNT < 160 (out of VBlank)...
        ldrh    r1, [r0, #6]
        cmp     r1, #160
        bhs     wait_out
wait_in:                                @ ...then until VCOUNT >= 160: one pass per video frame
        ldrh    r1, [r0, #6]
        cmp     r1, #160
        blo     wait_in

        add     r2, r0, #0x100
        ldrh    r1, [r2, #0x30]         @ KEYINPUT at 0x04000130: bit clear = pressed
        mvn     r1, r1
        and     r1, r1, r11             @ keys: bit set = pressed

        ldrb    r3, [r6, #2]            @ what the save RAM holds from the last frame (its
        add     r8, r8, r3              @ frame counter): h += it, so the game reads its SRAM
        eor     r8, r8, r1              @ h ^= keys
        mul     r3, r8, r7              @ h *= prime
        add     r9, r9, #1              @ frame += 1
        eor     r8, r3, r9              @ h ^= frame

        str     r8, [r4]
        str     r9, [r4, #4]
        str     r1, [r4, #8]
        and     r2, r9, #0xFF
        add     r2, r5, r2, lsl #1
        strh    r1, [r2]                @ history[frame % 256] = keys
.ifdef QUIET_AFTER                      @ the quiet variant (build-test-roms.ts assembles it with
        cmp     r9, #QUIET_AFTER        @ --defsym QUIET_AFTER=n): no SRAM store after frame n,
        bhi     sram_done               @ as a game that saves once and then only plays
.endif
        strb    r8, [r6]                @ SRAM has an 8-bit bus: byte stores only
        mov     r3, r8, lsr #8
        strb    r3, [r6, #1]
        strb    r9, [r6, #2]
sram_done:
        strh    r8, [r10]               @ backdrop colour = h (bit 15 ignored)
        b       frame

        .ltorg
        .align  2
        .ascii  "SRAM_V113"             @ save type marker (SRAM, 32 KiB)
        .align  2
