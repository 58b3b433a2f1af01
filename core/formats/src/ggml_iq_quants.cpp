// ggml's codecs of this family (ggml_codecs.hpp): not written yet.
#include "ggml_codecs.hpp"

namespace qs::detail {

GgmlCodec ggml_iq_codec(GgmlType) { return {}; }

}  // namespace qs::detail
