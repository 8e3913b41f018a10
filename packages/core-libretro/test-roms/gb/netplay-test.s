; netplay GB test ROM (MIT, part of @netplay/core-libretro's tests; see the package README).
; Assembled with sdasgb (Debian package sdcc) by scripts/build-test-roms.ts, which
; also writes the Nintendo logo and the header and global checksums: this file leaves them zero.
;
; Every frame (at the start of VBlank) it reads the joypad and mixes it into RAM:
;   WRAM 0xC000-0xC001  h, a 16-bit running mix: h = rotl16(h, 1) ^ sram[2] ^ joy, then h.hi += frame
;   WRAM 0xC002         frame counter (mod 256)
;   WRAM 0xC003         the joypad byte of the last frame (bit 7..0: Start Select B A Down Up Left Right)
;   WRAM 0xC100-0xC1FF  the joypad byte of each of the last 256 frames, indexed by frame counter
;   SRAM 0xA000-0xA002  h and the frame counter again (MBC1+RAM+battery: the save RAM changes);
;                       the next frame reads the counter back into h, so the game depends on it
;   SRAM 0xA003         boot counter, incremented once at power-on
; and shows h as the background's horizontal scroll (SCX), so the screen moves with the input.

        .module netplay_gb
        .area   ROM (ABS)

        .org    0x0100
        nop
        jp      start

        .org    0x0104
        .ds     48              ; Nintendo logo: written by the build script

        .org    0x0134
        .ascii  "NETPLAYTEST"   ; title (11 bytes)
        .db     0x00, 0x00, 0x00, 0x00  ; manufacturer code
        .db     0x00            ; CGB flag: a DMG game
        .db     0x00, 0x00      ; new licensee code
        .db     0x00            ; SGB flag: none
        .db     0x03            ; cartridge type: MBC1+RAM+BATTERY
        .db     0x00            ; ROM size: 32 KiB
        .db     0x02            ; RAM size: 8 KiB
        .db     0x01            ; destination: non-Japanese
        .db     0x33            ; old licensee: see new licensee code
        .db     0x00            ; version
        .db     0x00            ; header checksum: written by the build script
        .db     0x00, 0x00      ; global checksum: written by the build script

        .org    0x0150
start:
        di
        ld      sp, #0xdffe
        ld      a, #0x0a
        ld      (#0x0000), a    ; MBC1: enable the cartridge RAM
        xor     a
        ld      hl, #0xc000
        ld      (hl+), a        ; h = 0
        ld      (hl+), a
        ld      (hl+), a        ; frame = 0
        ld      (hl), a         ; joy = 0
        ld      hl, #0xc100     ; clear the input history
        ld      b, #0
clear:
        ld      (hl+), a
        dec     b
        jr      nz, clear
        ld      hl, #0xa003     ; count this boot in the save RAM
        inc     (hl)

frame:
wait_out:                       ; wait until LY < 144 (out of VBlank)...
        ld      a, (#0xff44)
        cp      #144
        jr      nc, wait_out
wait_in:                        ; ...then until LY >= 144: one pass per video frame
        ld      a, (#0xff44)
        cp      #144
        jr      c, wait_in

        ld      a, #0x20        ; select the direction keys (P14 low)
        ld      (#0xff00), a
        ld      a, (#0xff00)
        ld      a, (#0xff00)
        cpl
        and     #0x0f
        ld      b, a
        ld      a, #0x10        ; select the action keys (P15 low)
        ld      (#0xff00), a
        ld      a, (#0xff00)
        ld      a, (#0xff00)
        ld      a, (#0xff00)
        ld      a, (#0xff00)
        cpl
        and     #0x0f
        swap    a
        or      b
        ld      b, a            ; b = joy: Start Select B A Down Up Left Right
        ld      a, #0x30        ; deselect both
        ld      (#0xff00), a

        ld      a, (#0xc000)    ; de = h
        ld      e, a
        ld      a, (#0xc001)
        ld      d, a
        sla     e               ; de = rotl16(de, 1)
        rl      d
        jr      nc, no_carry
        inc     e
no_carry:
        ld      a, (#0xa002)    ; what the save RAM holds from the last frame (its frame
        xor     e               ; counter): h.lo ^= it, so the game reads its SRAM
        xor     b               ; h.lo ^= joy
        ld      e, a
        ld      a, (#0xc002)    ; frame += 1; h.hi += frame
        inc     a
        ld      (#0xc002), a
        ld      c, a
        add     a, d
        ld      d, a

        ld      a, e
        ld      (#0xc000), a
        ld      (#0xa000), a
        ld      (#0xff43), a    ; SCX = h.lo: the screen scrolls with the mix
        ld      a, d
        ld      (#0xc001), a
        ld      (#0xa001), a
        ld      a, c
        ld      (#0xa002), a
        ld      a, b
        ld      (#0xc003), a
        ld      h, #0xc1        ; history[frame] = joy
        ld      l, c
        ld      (hl), b
        jp      frame
