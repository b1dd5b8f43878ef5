"builtin.module"() ({
  "func.func"() ({
  ^bb0(%0: tensor<1x16x2x32xf16>, %1: tensor<1x16x2x32xf16>, %2: tensor<1x16x2x32xf16>):
    %3 = "anec.neuron"(%0) {mode = "relu", name = "qr"} : (tensor<1x16x2x32xf16>) -> tensor<1x16x2x32xf16>
    %4 = "anec.constant"() {name = "scale", value = dense_resource<scale.value> : tensor<1x1x1x1xf16>} : () -> tensor<1x1x1x1xf16>
    %5 = "anec.sdpa"(%3, %1, %2, %4) {name = "attn", subtract_max = true} : (tensor<1x16x2x32xf16>, tensor<1x16x2x32xf16>, tensor<1x16x2x32xf16>, tensor<1x1x1x1xf16>) -> tensor<1x16x2x32xf16>
    %6 = "anec.neuron"(%5) {mode = "sigmoid", name = "y"} : (tensor<1x16x2x32xf16>) -> tensor<1x16x2x32xf16>
    "func.return"(%6) : (tensor<1x16x2x32xf16>) -> ()
  }) {anec.inputs = [{name = "q"}, {name = "k"}, {name = "v"}], anec.outputs = [{name = "y@output"}], function_type = (tensor<1x16x2x32xf16>, tensor<1x16x2x32xf16>, tensor<1x16x2x32xf16>) -> tensor<1x16x2x32xf16>, sym_name = "net"} : () -> ()
}) : () -> ()

{-#
  dialect_resources: {
    builtin: {
      "scale.value": "0x02000000A831"
    }
  }
#-}
