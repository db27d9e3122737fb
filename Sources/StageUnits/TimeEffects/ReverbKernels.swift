import StageCore

/// The reverb's inner loops: one segment of at most one control interval, cut short where
/// a ring buffer wraps so that every loop runs over contiguous memory.
/// Thread: render (all of this file).
extension ReverbCore {
    /// Processes up to `count` samples from `phase` within the current control interval;
    /// returns how many it processed (fewer when a ring buffer wraps first).
    @inline(__always)
    mutating func segment(
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
            network(input: diffused, left: netL, right: netR, count: len, phase: phase)
            if bits == 0 {
                // Silent input: watch the tail fall (see `control`).
                var m: UInt32 = 0
                for s in 0..<len {
                    m = max(m, (erL[s] + netL[s]).bitPattern & 0x7fff_ffff, (erR[s] + netR[s]).bitPattern & 0x7fff_ffff)
                }
                intervalWetBits = max(intervalWetBits, m)
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

    /// `x`, or 0 when |x| < 1e-20.
    @inline(__always)
    static func flush(_ x: Float) -> Float { abs(x) < 1e-20 ? 0 : x }

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
                v = flush(v)  // what would decay into denormals
                b[s] = v
                d[s] = old - gain * v
            }
            done += c
            j += c
            if j == m { j = 0 }
        }
        return j
    }

    /// The crossfade weights for this segment of a fade with `left` intervals to go.
    @inline(__always)
    func fadeWeights(left: Int, phase: Int) -> UnsafePointer<Float> {
        UnsafePointer(fadeCurve + (Self.fadeIntervals - left) * Self.grid + phase)
    }

    /// The six taps of one side, summed into `dst` (crossfading to the next taps while
    /// `tapFadeLeft > 0`).
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
        let (g0, g1, g2, g3, g4, g5) = (gn[0], gn[1], gn[2], gn[3], gn[4], gn[5])
        for s in 0..<len {
            dst[s] = g0 * s0[s] + g1 * s1[s] + g2 * s2[s] + g3 * s3[s] + g4 * s4[s] + g5 * s5[s]
        }
        guard tapFadeLeft > 0 else { return }
        let up = fadeWeights(left: tapFadeLeft, phase: phase)
        let nd = nextTapDelay + first
        let ng = nextTapGain + first
        let n0 = base - nd[0]
        let n1 = base - nd[1]
        let n2 = base - nd[2]
        let n3 = base - nd[3]
        let n4 = base - nd[4]
        let n5 = base - nd[5]
        let (h0, h1, h2, h3, h4, h5) = (ng[0], ng[1], ng[2], ng[3], ng[4], ng[5])
        for s in 0..<len {
            let new = h0 * n0[s] + h1 * n1[s] + h2 * n2[s] + h3 * n3[s] + h4 * n4[s] + h5 * n5[s]
            dst[s] += (new - dst[s]) * up[s]
        }
    }

    /// The network's input: the diffused input at the pre-delay (the last tap).
    @inline(__always)
    func networkInput(into dst: UnsafeMutablePointer<Float>, count len: Int, phase: Int) {
        let base = UnsafePointer(erBuffer + erSize + erWrite)
        let k = Self.taps - 1
        let src = base - tapDelay[k]
        let gk = tapGain[k]
        for s in 0..<len { dst[s] = gk * src[s] }
        guard tapFadeLeft > 0 else { return }
        let up = fadeWeights(left: tapFadeLeft, phase: phase)
        let src2 = base - nextTapDelay[k]
        let g2 = nextTapGain[k]
        for s in 0..<len { dst[s] += (g2 * src2[s] - dst[s]) * up[s] }
    }

    /// Line i's sample at ring position `position` (−2 and −1 are the mirrors).
    @inline(__always)
    func linePointer(_ i: Int, at position: Int) -> UnsafeMutablePointer<Float> {
        fdn + i * lineStride + Self.lineOffset + position
    }

    /// The feedback delay network over `len` ≤ 64 samples. Every line is at least 128
    /// samples long, so nothing read in this segment was written in it: each step is a
    /// loop over time that vectorizes. (1) each line's read through its absorption FIR
    /// into a row; (2) the 8×8 Hadamard across rows, in place, plus the input with signs;
    /// two rows are the outputs; (3) the rows are written back into the lines.
    @inline(__always)
    mutating func network(
        input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        count len: Int, phase: Int
    ) {
        let mask = fdnSize - 1
        let w = fdnWrite
        let g = Self.grid
        let r = rows
        if lengthFadeLeft == 0 && !coefficientsRamping {
            for i in 0..<Self.lines {
                let src = UnsafePointer(linePointer(i, at: (w - length[i]) & mask))
                let prev = src - 1
                let prev2 = src - 2
                let a = absorbA[i]
                let b = absorbB[i]
                let c = absorbC[i]
                let z = r + i * g
                for s in 0..<len { z[s] = a * src[s] + b * prev[s] + c * prev2[s] }
            }
        } else {
            // Coefficients moving (linearly over this interval) and/or line lengths
            // changing (each line's read crossfades from the old to the new length). With
            // neither, this computes exactly what the loop above does.
            let up = fadeWeights(left: max(lengthFadeLeft, 1), phase: phase)
            let ramp = UnsafePointer(rampUp + phase)
            for i in 0..<Self.lines {
                let new = UnsafePointer(linePointer(i, at: (w - length[i]) & mask))
                let old = UnsafePointer(linePointer(i, at: (w - oldLength[i]) & mask))
                let a0 = startA[i]
                let b0 = startB[i]
                let c0 = startC[i]
                let da = absorbA[i] - a0
                let db = absorbB[i] - b0
                let dc = absorbC[i] - c0
                let z = r + i * g
                for s in 0..<len {
                    let a = a0 + da * ramp[s]
                    let b = b0 + db * ramp[s]
                    let c = c0 + dc * ramp[s]
                    let zo = a * old[s] + b * old[s - 1] + c * old[s - 2]
                    let zn = a * new[s] + b * new[s - 1] + c * new[s - 2]
                    z[s] = zo + (zn - zo) * up[s]
                }
            }
        }
        let k = Self.networkOutput
        let (r0, r1, r2, r3, r4, r5, r6, r7) = (r, r + g, r + 2 * g, r + 3 * g, r + 4 * g, r + 5 * g, r + 6 * g, r + 7 * g)
        for s in 0..<len {
            let a0 = r0[s] + r1[s]
            let a1 = r0[s] - r1[s]
            let a2 = r2[s] + r3[s]
            let a3 = r2[s] - r3[s]
            let a4 = r4[s] + r5[s]
            let a5 = r4[s] - r5[s]
            let a6 = r6[s] + r7[s]
            let a7 = r6[s] - r7[s]
            let b0 = a0 + a2
            let b1 = a1 + a3
            let b2 = a0 - a2
            let b3 = a1 - a3
            let b4 = a4 + a6
            let b5 = a5 + a7
            let b6 = a4 - a6
            let b7 = a5 - a7
            // Values under 1e-20 (−400 dB) become 0, so a decaying tail never reaches the
            // denormals, even with very short decay times and without flush-to-zero.
            let v0 = Self.flush(b0 + b4)
            let v1 = Self.flush(b1 + b5)
            left[s] = v0 * k
            right[s] = v1 * k
            let x = input[s]
            r0[s] = v0 + x
            r1[s] = v1 - x
            r2[s] = Self.flush(b2 + b6) + x
            r3[s] = Self.flush(b3 + b7) + x
            r4[s] = Self.flush(b0 - b4) - x
            r5[s] = Self.flush(b1 - b5) + x
            r6[s] = Self.flush(b2 - b6) - x
            r7[s] = Self.flush(b3 - b7) - x
        }
        for i in 0..<Self.lines {
            let line = linePointer(i, at: 0)
            (line + w).update(from: r + i * g, count: len)
            if w + len == fdnSize {
                line[-1] = line[fdnSize - 1]
                line[-2] = line[fdnSize - 2]
            }
        }
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
