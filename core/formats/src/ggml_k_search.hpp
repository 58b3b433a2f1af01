// Internal: the scale searches only the k-quants use (ggml-quants.c's make_qkx2_quants, make_q3_quants and
// make_qp_quants), each computed as that C computes it in float32: every product and sum in its order, the
// C conversions of int to uint8/int8 as x86-64 runs them (modulo 256). Written from the algorithm; no code
// of ggml's is copied. make_qx_quants and make_qkx3_quants, which the legacy types share, are in
// ggml_scale_search.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ggml_scale_search.hpp"

namespace qs::detail {

// The weights the k-quants' min-and-scale searches fit with: given (the importance-weighted quantizers'), or
// the reference quantizers' own, from the values: q2_K's |x|, q4_K's and q5_K's sqrt(Σ x^2 / 32) + |x| (the
// sum in index order).
enum class QkxWeights { Given, AbsX, RmsPlusAbsX };

// make_qkx2_quants: a scale and a min (min <= 0) for n (<= 32) values on [0, nmax] with the given
// weights. Starts from the min-max fit, then tries iscale = (rmin + rdelta is + nmax) / (max - min) for
// is = 0..nstep, each a weighted least-squares fit of scale and min to that candidate's codes, kept where
// its weighted error (squared, or absolute with use_mad) is below the best so far. L gets the codes,
// *the_min = -min; returns the scale.
inline float ggml_make_qkx2_quants_scalar(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                                          float* the_min, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += weights[i];
        sum_x += weights[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    const float fnmax = static_cast<float>(nmax);
    const auto error_of = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
    const auto code_at = [&](float iscale, int i) {
        const int l = ggml_nearest_int(iscale * (x[i] - min));
        return static_cast<std::uint8_t>(l < 0 ? 0 : (l > nmax ? nmax : l));
    };
    float iscale = fnmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = code_at(iscale, i);
        best_error += weights[i] * error_of(scale * static_cast<float>(L[i]) + min - x[i]);
    }
    std::uint8_t trial[32];
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            trial[i] = code_at(iscale, i);
            const float wl = weights[i] * static_cast<float>(trial[i]);
            sum_l += wl;
            sum_l2 += wl * static_cast<float>(trial[i]);
            sum_xl += wl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float error = 0;
            for (int i = 0; i < n; ++i)
                error += weights[i] * error_of(this_scale * static_cast<float>(trial[i]) + this_min - x[i]);
            if (error < best_error) {
                std::memcpy(L, trial, static_cast<std::size_t>(n));
                best_error = error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// make_q3_quants with do_rmse (q3_K's reference): a symmetric scale for n (<= 16) values on [-nmax,
// nmax - 1] weighted by x^2, from -nmax / max, then up to five passes that move one code at a time where
// that raises (Σ w x l)^2 / Σ w l^2. L gets the code plus nmax; returns the scale (0 for an all-zero group,
// whose L stays 0).
inline float ggml_make_q3_quants(int n, int nmax, const float* x, std::int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) amax = ax, max = x[i];
    }
    if (amax < kGgmlGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    const float iscale = -static_cast<float>(nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = ggml_nearest_int(iscale * x[i]);
        l = l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
        L[i] = static_cast<std::int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            if (slx > 0) {
                float sl2 = suml2 - w * li * li;
                int new_l = ggml_nearest_int(x[i] * sl2 / slx);
                new_l = new_l < -nmax ? -nmax : (new_l > nmax - 1 ? nmax - 1 : new_l);
                if (new_l != L[i]) {
                    const float fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<std::int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(L[i] + nmax);
    return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

// make_qp_quants: a positive scale for n (<= 16) values (the sub-blocks' scales or mins) on [0, nmax]
// with weights qw: the best of nmax / max and (nmax + 0.1 is) / max, is = -4..4, by weighted squared
// error, then up to five passes moving one code at a time. L gets the codes, each stored as ggml's
// uint8_t (a negative code wraps); returns the scale (0 where max < kGgmlGroupMaxEps, L then 0).
inline float ggml_make_qp_quants(int n, int nmax, const float* x, std::uint8_t* L, const float* qw) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];
    if (max < kGgmlGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    const float fnmax = static_cast<float>(nmax);
    float iscale = fnmax / max;
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::uint8_t>(ggml_nearest_int(iscale * x[i]));
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * static_cast<float>(L[i]);
        best_mse += qw[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * static_cast<float>(is) + fnmax) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            int l = ggml_nearest_int(iscale_is * x[i]);
            l = l < nmax ? l : nmax;
            const float diff = x[i] - scale_is * static_cast<float>(l);
            mse += qw[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = ggml_nearest_int(iscale * x[i]);
        l = l < nmax ? l : nmax;
        L[i] = static_cast<std::uint8_t>(l);
        const float fl = static_cast<float>(l);  // the int, before the uint8_t store
        sumlx += qw[i] * x[i] * fl;
        suml2 += qw[i] * fl * fl;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = qw[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            float sl2 = suml2 - w * li * li;
            if (slx > 0 && sl2 > 0) {
                int new_l = ggml_nearest_int(x[i] * sl2 / slx);
                new_l = new_l < nmax ? new_l : nmax;
                if (new_l != L[i]) {
                    const float fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<std::uint8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (changed == 0) break;
    }
    return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

}  // namespace qs::detail
