// A small C++ program whose functions have mangled names: a namespace, a class, an overload, a template.
#include <cstdio>

namespace ns {
struct Shape {
    virtual ~Shape() = default;
    virtual int area(int scale) const { return scale * 2; }
};

template <typename T>
T twice(T value) { return value + value; }

int thrower(int depth) {
    if (depth > 3) throw depth;
    return twice(depth) + Shape{}.area(depth);
}

int thrower(double depth) { return thrower(static_cast<int>(depth)); }
}  // namespace ns

int main(int argc, char **) {
    try {
        std::printf("%d\n", ns::thrower(argc) + ns::thrower(1.5));
    } catch (int) {
        return 1;
    }
    return 0;
}
