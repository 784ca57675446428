;; The compositor's bilinear sampling of a video plane (composite.ts paintPlane), in WebAssembly:
;; the same arithmetic as the JavaScript it replaced, so its output is bit for bit the same.
;; A row is filtered across once (`across`, ×256, kept as u16 for the next output row), each
;; output row mixes its two filtered source rows (`vertical`, eight samples at once with SIMD), and
;; where the video covers a sample partly or is faded, `blend` lays it over what the frame holds.
;; Built into bilinear-wasm.ts by scripts/build-wasm.mjs (bilinear.spec.ts checks they agree).
(module
  (import "env" "memory" (memory 1))

  ;; out[k] = src[x0[k]] * (256 - wx[k]) + src[x1[k]] * wx[k], k < n  (x0, x1, wx: i32; out: u16)
  (func (export "across") (param $src i32) (param $x0 i32) (param $x1 i32) (param $wx i32) (param $out i32) (param $n i32)
    (local $k i32) (local $h i32) (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $i (i32.shl (local.get $k) (i32.const 2)))
        (local.set $h (i32.load (i32.add (local.get $wx) (local.get $i))))
        (i32.store16 (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 1)))
          (i32.add
            (i32.mul
              (i32.load8_u (i32.add (local.get $src) (i32.load (i32.add (local.get $x0) (local.get $i)))))
              (i32.sub (i32.const 256) (local.get $h)))
            (i32.mul
              (i32.load8_u (i32.add (local.get $src) (i32.load (i32.add (local.get $x1) (local.get $i)))))
              (local.get $h))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next))))

  ;; out[k] = (up[k] * w0 + lo[k] * w1 + 32768) >> 16, k < n  (up, lo: u16; out: u8; w0 + w1 = 256)
  (func (export "vertical") (param $up i32) (param $lo i32) (param $w0 i32) (param $w1 i32) (param $out i32) (param $n i32)
    (local $k i32) (local $u v128) (local $l v128) (local $a v128) (local $b v128) (local $W0 v128) (local $W1 v128) (local $R v128)
    (local.set $W0 (i32x4.splat (local.get $w0)))
    (local.set $W1 (i32x4.splat (local.get $w1)))
    (local.set $R (i32x4.splat (i32.const 32768)))
    ;; Eight at a time: widened to i32 (the products reach 2^24), rounded, narrowed to u8.
    (block $done
      (loop $eight
        (br_if $done (i32.gt_u (i32.add (local.get $k) (i32.const 8)) (local.get $n)))
        (local.set $u (v128.load (i32.add (local.get $up) (i32.shl (local.get $k) (i32.const 1)))))
        (local.set $l (v128.load (i32.add (local.get $lo) (i32.shl (local.get $k) (i32.const 1)))))
        (local.set $a
          (i32x4.shr_u
            (i32x4.add
              (i32x4.add
                (i32x4.mul (i32x4.extend_low_i16x8_u (local.get $u)) (local.get $W0))
                (i32x4.mul (i32x4.extend_low_i16x8_u (local.get $l)) (local.get $W1)))
              (local.get $R))
            (i32.const 16)))
        (local.set $b
          (i32x4.shr_u
            (i32x4.add
              (i32x4.add
                (i32x4.mul (i32x4.extend_high_i16x8_u (local.get $u)) (local.get $W0))
                (i32x4.mul (i32x4.extend_high_i16x8_u (local.get $l)) (local.get $W1)))
              (local.get $R))
            (i32.const 16)))
        (v128.store64_lane 0 (i32.add (local.get $out) (local.get $k))
          (i8x16.narrow_i16x8_u
            (i16x8.narrow_i32x4_u (local.get $a) (local.get $b))
            (i16x8.narrow_i32x4_u (local.get $a) (local.get $b))))
        (local.set $k (i32.add (local.get $k) (i32.const 8)))
        (br $eight)))
    ;; The rest one by one.
    (block $done1
      (loop $one
        (br_if $done1 (i32.ge_u (local.get $k) (local.get $n)))
        (i32.store8 (i32.add (local.get $out) (local.get $k))
          (i32.shr_u
            (i32.add
              (i32.add
                (i32.mul (i32.load16_u (i32.add (local.get $up) (i32.shl (local.get $k) (i32.const 1)))) (local.get $w0))
                (i32.mul (i32.load16_u (i32.add (local.get $lo) (i32.shl (local.get $k) (i32.const 1)))) (local.get $w1)))
              (i32.const 32768))
            (i32.const 16)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $one))))

  ;; dst[k] = vals[k] over dst[k] at opacity a = cov[k] * covY (f64): as it is when a >= 1, untouched
  ;; when a <= 0 or NaN, else truncated vals·a + dst·(1 − a) + 0.5 (in [0.5, 255.5]: the truncation
  ;; cannot trap), the JavaScript `mix` (same f64 steps).
  (func (export "blend") (param $vals i32) (param $dst i32) (param $cov i32) (param $covY f64) (param $n i32)
    (local $k i32) (local $a f64)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $a (f64.mul (f64.load (i32.add (local.get $cov) (i32.shl (local.get $k) (i32.const 3)))) (local.get $covY)))
        (if (f64.ge (local.get $a) (f64.const 1))
          (then
            (i32.store8 (i32.add (local.get $dst) (local.get $k)) (i32.load8_u (i32.add (local.get $vals) (local.get $k)))))
          (else
            (if (f64.gt (local.get $a) (f64.const 0))
              (then
                (i32.store8 (i32.add (local.get $dst) (local.get $k))
                  (i32.trunc_f64_u
                    (f64.add
                      (f64.add
                        (f64.mul (f64.convert_i32_u (i32.load8_u (i32.add (local.get $vals) (local.get $k)))) (local.get $a))
                        (f64.mul (f64.convert_i32_u (i32.load8_u (i32.add (local.get $dst) (local.get $k)))) (f64.sub (f64.const 1) (local.get $a))))
                      (f64.const 0.5))))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next))))
)
