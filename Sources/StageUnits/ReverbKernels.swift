import StageCore

/// The reverb's inner loops: one segment of at most one control interval, cut short where
/// a ring buffer wraps so that every loop runs over contiguous memory.
/// Thread: render (all of this file).
extension ReverbUnit {
    /// Processes up to `count` samples from `phase` within the current control interval;
    /// returns how many it processed (fewer when a ring buffer wraps first).
    @inline(__always)
    func segment(
        input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        count: Int, phase: Int, params: ParameterValues, frame: Int, mono: Bool
    ) -> Int {
        let size = fdnSize
        let mask = size - 1
        var len = min(count, erSize - erWrite, size - fdnWrite)
        for i in 0..<Self.lines {
            len = min(len, size - ((fdnWrite - length[i]) & mask))
            if lengthFadeLeft > 0 { len = min(len, size - ((fdnWrite - oldLength[i]) & mask)) }
        }
        var bits: UInt32 = 0
        for s in 0..<len { bits |= input[s].bitPattern & 0x7fff_ffff }
        intervalInputBits |= bits

        let g = Self.grid
        let diffused = scratch
        let erL = scratch + g
        let erR = scratch + 2 * g
        let netL = scratch + 3 * g
        let netR = scratch + 4 * g
        if silent && bits == 0 {
            // All state is zero and stays zero: only the ring positions move.
            scratch.update(repeating: 0, count: 5 * g)
            allpassIndex.0 = (allpassIndex.0 + len) % allpassLength.0
            allpassIndex.1 = (allpassIndex.1 + len) % allpassLength.1
            allpassIndex.2 = (allpassIndex.2 + len) % allpassLength.2
        } else {
            silent = false
            // Diffusion.
            diffused.update(from: input, count: len)
            let ap = allpassBuffer
            allpassIndex.0 = Self.allpass(ap, length: allpassLength.0, index: allpassIndex.0, data: diffused, count: len)
            allpassIndex.1 = Self.allpass(
                ap + allpassLength.0, length: allpassLength.1, index: allpassIndex.1, data: diffused, count: len)
            allpassIndex.2 = Self.allpass(
                ap + allpassLength.0 + allpassLength.1, length: allpassLength.2, index: allpassIndex.2, data: diffused,
                count: len)
            // Reflection line (mirrored).
            let w = erBuffer + erWrite
            let wm = w + erSize
            for s in 0..<len {
                let v = diffused[s]
                w[s] = v
                wm[s] = v
            }
            reflections(into: erL, first: 0, count: len, phase: phase)
            reflections(into: erR, first: Self.tapsPerSide, count: len, phase: phase)
            networkInput(into: diffused, count: len, phase: phase)
            if lengthFadeLeft > 0 {
                networkFading(input: diffused, left: netL, right: netR, count: len, phase: phase)
            } else {
                network(input: diffused, left: netL, right: netR, count: len)
            }
        }
        Self.mix(
            input: input, erL: erL, erR: erR, netL: netL, netR: netR, left: left, right: right, count: len,
            params: params, frame: frame, mono: mono)
        erWrite += len
        if erWrite == erSize { erWrite = 0 }
        fdnWrite = (fdnWrite + len) & mask
        return len
    }

    /// A Schroeder allpass (delay `length`, coefficient `allpassGain`) in place on `data`.
    /// Each slot is read then written once per pass, so the loop has no dependency
    /// between samples and vectorizes. Returns the new index.
    @inline(__always)
    static func allpass(
        _ buffer: UnsafeMutablePointer<Float>, length m: Int, index: Int, data: UnsafeMutablePointer<Float>, count: Int
    ) -> Int {
        let gain = allpassGain
        var j = index
        var done = 0
        while done < count {
            let c = min(count - done, m - j)
            let b = buffer + j
            let d = data + done
            for s in 0..<c {
                let old = b[s]
                var v = d[s] + gain * old
                v = abs(v) < 1e-20 ? 0 : v  // flush what would decay into denormals
                b[s] = v
                d[s] = old - gain * v
            }
            done += c
            j += c
            if j == m { j = 0 }
        }
        return j
    }

    /// The six taps of one side, summed into `dst` (crossfading to the next taps when
    /// they changed at the start of this interval).
    @inline(__always)
    func reflections(into dst: UnsafeMutablePointer<Float>, first: Int, count len: Int, phase: Int) {
        let base = UnsafePointer(erBuffer + erSize + erWrite)
        let d = tapDelay + first
        let gn = tapGain + first
        let s0 = base - d[0]
        let s1 = base - d[1]
        let s2 = base - d[2]
        let s3 = base - d[3]
        let s4 = base - d[4]
        let s5 = base - d[5]
        if !tapsFading {
            let (g0, g1, g2, g3, g4, g5) = (gn[0], gn[1], gn[2], gn[3], gn[4], gn[5])
            for s in 0..<len {
                dst[s] = g0 * s0[s] + g1 * s1[s] + g2 * s2[s] + g3 * s3[s] + g4 * s4[s] + g5 * s5[s]
            }
        } else {
            let up = rampUp + phase
            let down = rampDown + phase
            for s in 0..<len {
                dst[s] = (gn[0] * s0[s] + gn[1] * s1[s] + gn[2] * s2[s] + gn[3] * s3[s] + gn[4] * s4[s] + gn[5] * s5[s]) * down[s]
            }
            let nd = nextTapDelay + first
            let ng = nextTapGain + first
            for k in 0..<Self.tapsPerSide {
                let src = base - nd[k]
                let gk = ng[k]
                for s in 0..<len { dst[s] += gk * up[s] * src[s] }
            }
        }
    }

    /// The network's input: the diffused input at the pre-delay (the last tap).
    @inline(__always)
    func networkInput(into dst: UnsafeMutablePointer<Float>, count len: Int, phase: Int) {
        let base = UnsafePointer(erBuffer + erSize + erWrite)
        let k = Self.taps - 1
        let src = base - tapDelay[k]
        let gk = tapGain[k]
        if !tapsFading {
            for s in 0..<len { dst[s] = gk * src[s] }
        } else {
            let up = rampUp + phase
            let down = rampDown + phase
            let src2 = base - nextTapDelay[k]
            let g2 = nextTapGain[k]
            for s in 0..<len { dst[s] = gk * down[s] * src[s] + g2 * up[s] * src2[s] }
        }
    }

    /// One Hadamard stage (Pease form): pairs (even, odd) → (sum | difference). Three
    /// stages make the 8×8 Walsh–Hadamard matrix (entries ±1; the 1/√8 is in the filter).
    @inline(__always)
    static func butterfly(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let e = v.evenHalf
        let o = v.oddHalf
        return SIMD8(lowHalf: e + o, highHalf: e - o)
    }

    /// The feedback delay network over `len` samples: read the 8 lines, absorb, mix,
    /// write back with the input. Outputs two orthogonal rows of the mix.
    @inline(__always)
    func network(input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count len: Int) {
        let mask = fdnSize - 1
        let w = fdnWrite
        let f = UnsafePointer(fdn)
        let p0 = f + ((w - length[0]) & mask) * 8
        let p1 = f + ((w - length[1]) & mask) * 8 + 1
        let p2 = f + ((w - length[2]) & mask) * 8 + 2
        let p3 = f + ((w - length[3]) & mask) * 8 + 3
        let p4 = f + ((w - length[4]) & mask) * 8 + 4
        let p5 = f + ((w - length[5]) & mask) * 8 + 5
        let p6 = f + ((w - length[6]) & mask) * 8 + 6
        let p7 = f + ((w - length[7]) & mask) * 8 + 7
        let dst = UnsafeMutableRawPointer(fdn + w * 8)
        let b = coefB
        let p = coefP
        let u = Self.inputSigns
        let k = Self.networkOutput
        var z = filterState
        var energy = SIMD8<Float>.zero
        for s in 0..<len {
            let o = s &* 8
            let x = SIMD8<Float>(p0[o], p1[o], p2[o], p3[o], p4[o], p5[o], p6[o], p7[o])
            z = b * x + p * z
            var v = Self.butterfly(Self.butterfly(Self.butterfly(z)))
            left[s] = v[0] * k
            right[s] = v[1] * k
            v += u * input[s]
            energy += v * v
            dst.storeBytes(of: v, toByteOffset: o &* 4, as: SIMD8<Float>.self)
        }
        filterState = z
        intervalEnergy += energy.sum()
    }

    /// As `network`, while the line lengths crossfade from `oldLength` to `length`.
    func networkFading(
        input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, count len: Int,
        phase: Int
    ) {
        let mask = fdnSize - 1
        let w = fdnWrite
        let f = UnsafePointer(fdn)
        let total = Float(Self.lengthFadeIntervals * Self.grid)
        let elapsed = (Self.lengthFadeIntervals - lengthFadeLeft) * Self.grid + phase
        let dst = UnsafeMutableRawPointer(fdn + w * 8)
        let b = coefB
        let p = coefP
        let u = Self.inputSigns
        let k = Self.networkOutput
        var z = filterState
        var energy = SIMD8<Float>.zero
        var xo = SIMD8<Float>.zero
        var xn = SIMD8<Float>.zero
        for s in 0..<len {
            for i in 0..<Self.lines {
                xo[i] = f[((w + s - oldLength[i]) & mask) * 8 + i]
                xn[i] = f[((w + s - length[i]) & mask) * 8 + i]
            }
            let a = Float(elapsed + s + 1) / total
            z = b * (xo * (1 - a) + xn * a) + p * z
            var v = Self.butterfly(Self.butterfly(Self.butterfly(z)))
            left[s] = v[0] * k
            right[s] = v[1] * k
            v += u * input[s]
            energy += v * v
            dst.storeBytes(of: v, toByteOffset: s &* 32, as: SIMD8<Float>.self)
        }
        filterState = z
        intervalEnergy += energy.sum()
    }

    /// Output: dry·(1 − mix) + (reflections + network)·mix·gain, per sample.
    @inline(__always)
    static func mix(
        input: UnsafeMutablePointer<Float>, erL: UnsafeMutablePointer<Float>, erR: UnsafeMutablePointer<Float>,
        netL: UnsafeMutablePointer<Float>, netR: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>, count len: Int, params: ParameterValues, frame: Int, mono: Bool
    ) {
        let m = params[P.mix] + frame
        if mono {
            let db = params[P.gain] + frame
            for s in 0..<len {
                let wet = m[s] * 0.01
                let gw = wet * Curves.decibelsToGain(db[s])
                left[s] = input[s] * (1 - wet) + (erL[s] + netL[s] + erR[s] + netR[s]) * (0.5 * gw)
            }
        } else if params.isSteady(P.gain) {
            let gain = Curves.decibelsToGain(params.value(P.gain))
            for s in 0..<len {
                let wet = m[s] * 0.01
                let dry = input[s] * (1 - wet)
                let gw = wet * gain
                left[s] = dry + (erL[s] + netL[s]) * gw
                right[s] = dry + (erR[s] + netR[s]) * gw
            }
        } else {
            let db = params[P.gain] + frame
            for s in 0..<len {
                let wet = m[s] * 0.01
                let dry = input[s] * (1 - wet)
                let gw = wet * Curves.decibelsToGain(db[s])
                left[s] = dry + (erL[s] + netL[s]) * gw
                right[s] = dry + (erR[s] + netR[s]) * gw
            }
        }
    }
}
