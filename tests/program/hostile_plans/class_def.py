# expect: parse-error line=2
class Plan:
	def run():
		walk('kitchen')
