module github.com/stem-kgqa/stem

go 1.26.5

require (
	github.com/gomlx/compute v0.0.0-20260716164435-04857206aff7
	github.com/gomlx/go-huggingface v0.4.0
	github.com/gomlx/gomlx v0.28.0
	github.com/gomlx/onnx-gomlx v0.5.0
	github.com/samber/lo v1.53.0
	github.com/urfave/cli/v2 v2.27.7
	github.com/viterin/vek v0.4.2
)

require (
	github.com/chewxy/math32 v1.11.1 // indirect
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gofrs/flock v0.13.0 // indirect
	github.com/gomlx/exceptions v0.0.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/exp v0.0.0-20260410095643-746e56fc9e2f // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
)
